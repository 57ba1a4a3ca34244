import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { BudgetLedger, NO_BUDGETS, scopeKey, type BudgetScope } from '@smsgw/core';
import { DeviceBudgets, DevicePacing } from '@smsgw/queue';
import { testPrefixes } from '@smsgw/queue/testing';

// The planner fills the counters it read (pace-peek.lua, budget-peek.lua) with its own arithmetic;
// the take scripts must then find the same room, or every plan would be made again.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefixes = testPrefixes('routing');
afterAll(async () => {
  await prefixes.remove(redis);
  await redis.quit();
});

const prefix = prefixes.next;
const ids = (n: number) => Array.from({ length: n }, () => randomUUID());

describe('the counters the planner reads', () => {
  it('pacing: the room a peek reads is what a take then hands out, with the same wait once full', async () => {
    const pacing = new DevicePacing(redis, prefix());
    const device = randomUUID();
    const windows = [
      { windowMs: 60_000, limit: 6 },
      { windowMs: 3_600_000, limit: 8 },
    ];
    expect((await pacing.peek([{ deviceId: device, windows }])).get(device)).toEqual({ room: 6, retryInMs: 60_000 }); // once those 6 are taken, the first leaves the minute in a minute
    await pacing.take(device, windows, ids(4));
    const peeked = (await pacing.peek([{ deviceId: device, windows }])).get(device)!;
    expect(peeked.room).toBe(2);
    const taken = await pacing.take(device, windows, ids(3));
    expect(taken.taken).toBe(2);
    expect(Math.abs(taken.retryInMs - peeked.retryInMs)).toBeLessThan(1000);
    expect((await pacing.peek([{ deviceId: device, windows }])).get(device)).toEqual({ room: 0, retryInMs: expect.any(Number) });
  });

  it("budgets: the planner's ledger takes, skips and waits exactly as budget-take.lua", async () => {
    const budgets = new DeviceBudgets(redis, prefix());
    const deviceId = randomUUID();
    const scopes: BudgetScope[] = [
      { deviceId, sim: 0, generation: '1', limits: { ...NO_BUDGETS, segmentsPerHour: 12, uniqueRecipientsPerMonth: 3 } },
      { deviceId, sim: 2, generation: '1', limits: { ...NO_BUDGETS, segmentsPerDay: 9 } },
    ];
    for (const scope of scopes) {
      const take = await budgets.take([scope], [{ segments: 1, to: 'x' }]);
      if ('seed' in take) await budgets.seed(scope, take.at, { minutes: [], day: 0, month: 0, recipients: [] });
    }
    await budgets.take(scopes, [
      { segments: 3, to: '+1' },
      { segments: 2, to: '+2' },
    ]);
    const items = [
      { segments: 2, to: '+3' },
      { segments: 1, to: '+4' },
      { segments: 2, to: '+1' },
      { segments: 4, to: '+2' },
      { segments: 1, to: '+2' },
    ];
    const peeks = await budgets.peek(scopes, [...new Set(items.map((i) => i.to))]);
    const counts = new Map(
      peeks.map((p, i) => {
        if ('seed' in p) throw new Error('seeded above');
        return [scopeKey(scopes[i]!), p] as const;
      }),
    );
    const clock = peeks[0]!.at;
    const planned = new BudgetLedger(clock, counts).take(scopes, items);
    const taken = await budgets.take(scopes, items);
    if ('seed' in taken) throw new Error('seeded above');
    expect(planned.taken).toEqual(taken.taken);
    expect(planned.taken).toEqual([true, false, true, false, false]); // a 4th recipient, then the day's 9 parts
    expect(Math.abs(planned.retryInMs - taken.retryInMs)).toBeLessThan(1000);
  });
});
