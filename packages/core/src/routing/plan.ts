import { BudgetLedger } from './budget-ledger.ts';
import { applyBudgets } from './budgets.ts';
import type { Decision, RoutingPlan } from './decisions.ts';
import type { Placement } from './fit-and-spill.ts';
import { holdBack } from './hold-back.ts';
import { PaceLedger } from './pace-ledger.ts';
import { pace } from './pacing.ts';
import { openPools, poolOf } from './pools.ts';
import { reservationsOf } from './reservations.ts';
import { roundRobin } from './round-robin.ts';
import type { RoutingSnapshot } from './snapshot.ts';
import { pickSticky, withStickySims } from './sticky.ts';

/** The priority from which a message skips its device's pacing (as the SMS Gate app skips its own limits); carrier budgets still apply. */
export const PRIORITY_SKIPS_PACING = 100;

/**
 * The routing planner (docs/development.md, "The routing planner"): decides, for every message of
 * the snapshot, a device and SIM, a wait or a failure. Pure: the dispatcher loads the snapshot,
 * reserves the plan's places in the shared counters, commits the assignments and announces them.
 * The rules, in the order they apply:
 *  1. hold-back: past its queue deadline it fails, not yet due it waits (hold-back.ts);
 *  2. a named device that was deleted fails the message; a named device is otherwise its proposal;
 *  3. sticky sender: the recipient's device, when it may take the message (sticky.ts);
 *  4. round-robin over the pool, paused devices and failed ones left out (round-robin.ts, pools.ts);
 *  5. pacing: fit, then spill or wait (pacing.ts, fit-and-spill.ts); priority >= 100 skips it;
 *  6. carrier budgets after pacing, picking the SIM (budgets.ts, the same fit-and-spill);
 *  7. never a device the message failed on; the sticky SIM where no budget picked one.
 */
export function planRouting(snapshot: RoutingSnapshot): RoutingPlan {
  const decisions = new Map<string, Decision>();
  const { ready, held } = holdBack(snapshot.messages, snapshot);
  for (const [id, decision] of held) decisions.set(id, decision);
  const byId = new Map(ready.map((m) => [m.id, m]));

  const named: Placement[] = [];
  for (const m of ready) {
    if (m.requestedDeviceGone) decisions.set(m.id, { action: 'fail', reason: 'device_gone' });
    else if (m.requestedDeviceId) named.push({ id: m.id, deviceId: m.requestedDeviceId });
  }
  const movable = ready.filter((m) => !m.requestedDeviceId);
  const pools = openPools(snapshot.pools, snapshot.paused);
  const sticky = pickSticky(movable, snapshot.sticky, pools);
  const rr = roundRobin(sticky.rest, snapshot);
  const proposed = [...named, ...sticky.picks, ...rr.picks];

  const ledgers = { pacing: new PaceLedger(snapshot), budgets: new BudgetLedger(snapshot.counters.clock, snapshot.counters.budgets) };
  const spill = { movable: new Map(movable.map((m) => [m.id, poolOf(m)])), pools };
  const urgent = (p: Placement) => (byId.get(p.id)?.priority ?? 0) >= PRIORITY_SKIPS_PACING;
  const paced = pace(ledgers.pacing, { ...spill, assignments: proposed.filter((p) => !urgent(p)) });
  const budgeted = applyBudgets(ledgers, snapshot.budgets, byId, { ...spill, assignments: [...paced.assignments, ...proposed.filter(urgent)] });

  const waitFor =
    (reason: 'paced' | 'budget') =>
    ([id, ms]: [string, number]) =>
      decisions.set(id, { action: 'wait', reason, until: new Date(snapshot.now.getTime() + ms) });
  [...paced.waiting].forEach(waitFor('paced'));
  [...budgeted.waiting].forEach(waitFor('budget'));
  // Failover: a message never goes back to a device it failed on (a named one, or a spill's target).
  const assignments = withStickySims(
    budgeted.assignments.filter((a) => !byId.get(a.id)?.attemptedDeviceIds.includes(a.deviceId)),
    sticky.choices,
  );
  for (const a of assignments) decisions.set(a.id, { action: 'assign', deviceId: a.deviceId, simNumber: a.simNumber });
  for (const m of ready) if (!decisions.has(m.id)) decisions.set(m.id, { action: 'wait', reason: 'no_device' });

  return { decisions, reservations: reservationsOf(assignments, rr.slots, ledgers.pacing, budgeted.rooms) };
}
