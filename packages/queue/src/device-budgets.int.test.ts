import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { testPrefixes } from './testing/test-prefixes.ts';
import { DeviceBudgets, type BudgetLimits, type BudgetScope } from './device-budgets.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefixes = testPrefixes('budget');
afterAll(async () => {
  await prefixes.remove(redis);
  await redis.quit();
});

const none: BudgetLimits = { segmentsPerHour: null, segmentsPerDay: null, segmentsPerMonth: null, uniqueRecipientsPerMonth: null };
const scope = (limits: Partial<BudgetLimits>, sim = 0, deviceId = randomUUID()): BudgetScope => ({
  deviceId,
  sim,
  generation: '1',
  limits: { ...none, ...limits },
});
const empty = { minutes: [], day: 0, month: 0, recipients: [] };

async function seeded(budgets: DeviceBudgets, scopes: BudgetScope[]) {
  for (const s of scopes) {
    const first = await budgets.take([s], [{ segments: 1, to: '+15550000000' }]);
    if (!('seed' in first)) throw new Error('expected a seed request');
    await budgets.seed(s, first.at, empty);
  }
}

describe('DeviceBudgets', () => {
  it('asks for a seed first, then counts segments against the hourly budget and says when room frees', async () => {
    const budgets = new DeviceBudgets(redis, prefixes.next());
    const s = scope({ segmentsPerHour: 5 });
    await seeded(budgets, [s]);
    const first = await budgets.take(
      [s],
      [
        { segments: 3, to: '+15550000001' },
        { segments: 3, to: '+15550000002' },
        { segments: 2, to: '+15550000003' },
      ],
    );
    expect(first).toMatchObject({ taken: [true, false, true] });
    if (!('taken' in first)) throw new Error('unreachable');
    expect(first.retryInMs).toBeGreaterThan(3_540_000);
    expect(first.retryInMs).toBeLessThanOrEqual(3_600_000);
    expect(await budgets.take([s], [{ segments: 1, to: '+15550000004' }])).toMatchObject({ taken: [false] });
  });

  it('charges a recipient once a month: a known one still fits when a new one does not', async () => {
    const budgets = new DeviceBudgets(redis, prefixes.next());
    const s = scope({ uniqueRecipientsPerMonth: 2 });
    await seeded(budgets, [s]);
    const take = await budgets.take(
      [s],
      ['+1555001', '+1555002', '+1555003', '+1555001', '+1555002'].map((to) => ({ segments: 1, to })),
    );
    expect(take).toMatchObject({ taken: [true, true, false, true, true] });
  });

  it('gives back released room, and a scope with other limits (or wiped) is seeded again', async () => {
    const budgets = new DeviceBudgets(redis, prefixes.next());
    const s = scope({ segmentsPerDay: 2 });
    await seeded(budgets, [s]);
    const take = await budgets.take([s], [{ segments: 2, to: '+1555001' }]);
    if (!('taken' in take)) throw new Error('unexpected seed');
    expect(take.taken).toEqual([true]);
    expect(await budgets.take([s], [{ segments: 1, to: '+1555002' }])).toMatchObject({ taken: [false] });
    await budgets.release([s], take.at, [{ segments: 2, to: '+1555001' }]);
    expect(await budgets.take([s], [{ segments: 2, to: '+1555002' }])).toMatchObject({ taken: [true] });
    const changed = { ...s, generation: '2' };
    const ask = await budgets.take([changed], [{ segments: 1, to: '+1555003' }]);
    expect(ask).toMatchObject({ seed: changed });
    await budgets.seed(changed, ask.at, { minutes: [[Math.floor(ask.at / 60_000), 1]], day: 1, month: 1, recipients: [['+1555009', 1]] });
    expect(
      await budgets.take(
        [changed],
        [
          { segments: 1, to: '+1555003' },
          { segments: 1, to: '+1555004' },
        ],
      ),
    ).toMatchObject({ taken: [true, false] });
  });

  it('takes only what fits every scope: the device as a whole and its SIM', async () => {
    const budgets = new DeviceBudgets(redis, prefixes.next());
    const deviceId = randomUUID();
    const device = scope({ segmentsPerMonth: 3 }, 0, deviceId);
    const sim2 = scope({ segmentsPerHour: 10 }, 2, deviceId);
    await seeded(budgets, [device, sim2]);
    const items = Array.from({ length: 5 }, (_, i) => ({ segments: 1, to: `+155500${i}` }));
    expect(await budgets.take([device, sim2], items)).toMatchObject({ taken: [true, true, true, false, false] });
  });

  it('never lets two concurrent takers past the budget', async () => {
    const budgets = new DeviceBudgets(redis, prefixes.next());
    const s = scope({ segmentsPerHour: 50 });
    await seeded(budgets, [s]);
    const takes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        budgets.take(
          [s],
          Array.from({ length: 5 }, (__, j) => ({ segments: 1, to: `+1555${i}${j}` })),
        ),
      ),
    );
    const taken = takes.flatMap((t) => ('taken' in t ? t.taken : [])).filter(Boolean).length;
    expect(taken).toBe(50);
  });
});
