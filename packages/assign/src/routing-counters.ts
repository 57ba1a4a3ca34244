import { hasBudget, paceWindows, scopeKey, type BudgetScope, type RoutingCounters, type ScopeCounts } from '@smsgw/core';
import { budgetSeed, type RoutingRecord, type Sql } from '@smsgw/db/sql';
import { roundRobinKey, type DeviceBudgets, type DevicePacing, type RedisClient } from '@smsgw/queue';

export interface CounterDeps {
  sql: Sql;
  redis: RedisClient;
  config: { QUEUE_PREFIX: string };
  pacing: DevicePacing;
  budgets: DeviceBudgets;
}

/**
 * The shared counters the routing planner fills, read without taking anything, in one round trip
 * each (the users' round-robin cursors, the paced devices' windows, the budget scopes): a budget
 * scope Redis has not counted (wiped, new limits) is seeded from Postgres first, as a take would.
 */
export async function readRoutingCounters(deps: CounterDeps, record: RoutingRecord, slots: Map<string, number>): Promise<RoutingCounters> {
  const users = [...new Set(record.messages.filter((m) => !m.requestedDeviceId).map((m) => m.userId))];
  const [cursors, pacing, budgets] = await Promise.all([
    users.length === 0 ? [] : deps.redis.mget(users.map((u) => roundRobinKey(deps.config.QUEUE_PREFIX, u))),
    deps.pacing.peek([...record.rateLimits].map(([deviceId, rate]) => ({ deviceId, windows: paceWindows(rate) }))),
    readBudgets(deps, record),
  ]);
  return {
    clock: budgets.clock,
    cursors: new Map(users.map((u, i) => [u, Number(cursors[i] ?? 0)])),
    slots,
    pacing,
    budgets: budgets.counts,
  };
}

async function readBudgets(deps: CounterDeps, record: RoutingRecord): Promise<{ clock: number; counts: Map<string, ScopeCounts> }> {
  const scopes: BudgetScope[] = [...record.budgets].flatMap(([deviceId, device]) => [
    ...(hasBudget(device.device) ? [{ deviceId, sim: 0, generation: device.generation, limits: device.device }] : []),
    ...device.sims.map((sim) => ({ deviceId, sim: sim.simNumber, generation: device.generation, limits: sim })),
  ]);
  const recipients = [...new Set(record.messages.map((m) => m.to))];
  const counts = new Map<string, ScopeCounts>();
  let clock = Date.now();
  let left = scopes;
  for (let attempt = 0; left.length > 0; attempt++) {
    if (attempt > scopes.length) throw new Error('carrier budget counters could not be seeded');
    const peeks = await deps.budgets.peek(left, recipients);
    const unseeded: BudgetScope[] = [];
    for (const [i, peek] of peeks.entries()) {
      clock = peek.at;
      if ('seed' in peek) {
        const { deviceId, sim } = peek.seed;
        await deps.budgets.seed(peek.seed, peek.at, await budgetSeed(deps.sql, { deviceId, sim, at: peek.at }));
        unseeded.push(left[i]!);
      } else counts.set(scopeKey(left[i]!), peek);
    }
    left = unseeded;
  }
  return { clock, counts };
}
