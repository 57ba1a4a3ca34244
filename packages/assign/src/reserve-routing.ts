import { MIN_WAIT_MS, paceWindows, planRouting, type RoutingPlan, type RoutingSnapshot } from '@smsgw/core';
import type { RoutingRecord } from '@smsgw/db/sql';
import { roundRobinKey, type BudgetItem } from '@smsgw/queue';
import { readRoutingCounters, type CounterDeps } from './routing-counters.ts';

/** Room taken in the budget counters, to give back if the assignment loses its compare-and-set. */
interface TakenRoom {
  id: string;
  scopes: { deviceId: string; sim: number }[];
  at: number;
  item: BudgetItem;
}

/** What a plan holds in the shared counters once reserved. */
export interface Held {
  /** Pacing places, by device. */
  paced: Map<string, string[]>;
  rooms: TakenRoom[];
}

// Another dispatcher took the room a plan counted on: the plan is made again, at most this often.
const ROUNDS = 3;

/**
 * Plans the batch and reserves what the plan needs in the shared counters: the round-robin slots
 * (INCRBY hands each message its own), the pacing places and the budget room, each taken by its
 * Redis script, which checks the room again atomically. When another dispatcher took room the plan
 * counted on, the places of this round are given back and the plan is made again on fresh counters;
 * after the last round, a message still refused waits.
 */
export async function planAndReserve(deps: CounterDeps, record: RoutingRecord): Promise<{ plan: RoutingPlan; held: Held }> {
  const slots = new Map<string, number>();
  let slotsTaken = false;
  for (let round = 1; ; round++) {
    const snapshot: RoutingSnapshot = { ...record, counters: await readRoutingCounters(deps, record, slots) };
    let plan = planRouting(snapshot);
    if (!slotsTaken) {
      slotsTaken = true;
      if (await takeSlots(deps, plan, slots)) plan = planRouting(snapshot);
    }
    const { held, refused } = await take(deps, record, plan);
    if (refused.size === 0) return { plan, held };
    if (round < ROUNDS) {
      await release(deps, held, new Set());
      continue;
    }
    await release(
      deps,
      only(held, (id) => refused.has(id)),
      new Set(),
    );
    const until = new Date(record.now.getTime() + MIN_WAIT_MS);
    for (const [id, reason] of refused) plan.decisions.set(id, { action: 'wait', reason, until });
    return { plan, held: only(held, (id) => !refused.has(id)) };
  }
}

/** What `held` holds for the messages `keep` keeps. */
function only(held: Held, keep: (id: string) => boolean): Held {
  return { paced: new Map([...held.paced].map(([deviceId, ids]) => [deviceId, ids.filter(keep)])), rooms: held.rooms.filter((r) => keep(r.id)) };
}

/** Moves the users' cursors by the slots the plan used; true when another dispatcher moved one meanwhile (`slots` then has the ranges taken). */
async function takeSlots(deps: CounterDeps, plan: RoutingPlan, slots: Map<string, number>): Promise<boolean> {
  const ranges = plan.reservations.slots;
  if (ranges.length === 0) return false;
  const pipeline = deps.redis.pipeline();
  for (const r of ranges) pipeline.incrby(roundRobinKey(deps.config.QUEUE_PREFIX, r.userId), r.count);
  const results = (await pipeline.exec()) ?? [];
  let moved = false;
  ranges.forEach((r, i) => {
    const [error, end] = results[i] ?? [new Error('no reply'), 0];
    if (error) throw error;
    const start = Number(end) - r.count;
    slots.set(r.pool, start);
    if (start !== r.start) moved = true;
  });
  return moved;
}

async function take(deps: CounterDeps, record: RoutingRecord, plan: RoutingPlan): Promise<{ held: Held; refused: Map<string, 'paced' | 'budget'> }> {
  const held: Held = { paced: new Map(), rooms: [] };
  const refused = new Map<string, 'paced' | 'budget'>();
  for (const { deviceId, ids } of plan.reservations.pacing) {
    const { taken } = await deps.pacing.take(deviceId, paceWindows(record.rateLimits.get(deviceId)!), ids);
    held.paced.set(deviceId, ids.slice(0, taken));
    for (const id of ids.slice(taken)) refused.set(id, 'paced');
  }
  const messages = new Map(record.messages.map((m) => [m.id, m]));
  for (const { scopes, ids } of plan.reservations.budgets) {
    const items = ids.map((id) => ({ segments: messages.get(id)!.segments, to: messages.get(id)!.to }));
    const result = await deps.budgets.take(scopes, items);
    // A scope seeded since the counters were read (another dispatcher's take, a wipe) is read again.
    const taken = 'seed' in result ? ids.map(() => false) : result.taken;
    const at = result.at;
    ids.forEach((id, i) => {
      if (taken[i]) held.rooms.push({ id, scopes: scopes.map((s) => ({ deviceId: s.deviceId, sim: s.sim })), at, item: items[i]! });
      else refused.set(id, 'budget');
    });
  }
  return { held, refused };
}

/** Gives back what the plan held for messages not in `assigned` (another dispatcher assigned them first, or they left pending). */
export async function release(deps: CounterDeps, held: Held, assigned: Set<string>): Promise<void> {
  for (const [deviceId, ids] of held.paced)
    await deps.pacing.release(
      deviceId,
      ids.filter((id) => !assigned.has(id)),
    );
  const groups = new Map<string, TakenRoom[]>();
  for (const room of held.rooms.filter((r) => !assigned.has(r.id))) {
    const key = `${room.at}:${room.scopes.map((s) => `${s.deviceId}/${s.sim}`).join(',')}`;
    groups.set(key, [...(groups.get(key) ?? []), room]);
  }
  for (const group of groups.values())
    await deps.budgets.release(
      group[0]!.scopes,
      group[0]!.at,
      group.map((r) => r.item),
    );
}
