import type { BudgetRoom } from './budgets.ts';
import type { Reservations } from './decisions.ts';
import type { Placement } from './fit-and-spill.ts';
import type { PaceLedger } from './pace-ledger.ts';

/** The places the plan's assignments hold in the shared counters, grouped as the Redis scripts take them. */
export function reservationsOf(assignments: Placement[], slots: Reservations['slots'], pacing: PaceLedger, rooms: BudgetRoom[]): Reservations {
  const assigned = new Set(assignments.map((a) => `${a.id}:${a.deviceId}`));
  const paced = new Map<string, string[]>();
  for (const a of assignments) if (pacing.holds(a.deviceId, a.id)) paced.set(a.deviceId, [...(paced.get(a.deviceId) ?? []), a.id]);
  const budgets = new Map<string, Reservations['budgets'][number]>();
  for (const room of rooms) {
    if (!assigned.has(`${room.id}:${room.deviceId}`)) continue;
    const key = room.scopes.map((s) => `${s.deviceId}/${s.sim}`).join(',');
    const group = budgets.get(key) ?? { scopes: room.scopes, ids: [] };
    group.ids.push(room.id);
    budgets.set(key, group);
  }
  return {
    slots,
    pacing: [...paced].map(([deviceId, ids]) => ({ deviceId, ids })),
    budgets: [...budgets.values()],
  };
}
