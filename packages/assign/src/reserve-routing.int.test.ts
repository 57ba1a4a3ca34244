import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimits } from '@smsgw/core';
import { message as routingMessage } from '@smsgw/core/testing';
import { createSql, type RoutingRecord } from '@smsgw/db/sql';
import { DeviceBudgets, DevicePacing, type PaceTake, type PaceWindow } from '@smsgw/queue';
import { planAndReserve } from './reserve-routing.ts';
import { testPrefixes } from '@smsgw/queue/testing';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
// No statement runs (no budget to seed): the pool never connects.
const sql = createSql({ url: 'postgres://postgres@127.0.0.1:5432/postgres' });
const prefixes = testPrefixes('reserve');
afterAll(async () => {
  await prefixes.remove(redis);
  await Promise.all([redis.quit(), sql.end()]);
});

/** Another dispatcher takes `deviceId`'s place just before this one reserves it. */
class RacedPacing extends DevicePacing {
  constructor(
    private readonly rival: DevicePacing,
    private readonly raced: string,
  ) {
    super(redis, '');
  }

  override async take(deviceId: string, windows: PaceWindow[], ids: string[]): Promise<PaceTake> {
    if (deviceId === this.raced) await this.rival.take(deviceId, windows, ['rival']);
    return this.rival.take(deviceId, windows, ids);
  }

  override peek(devices: { deviceId: string; windows: PaceWindow[] }[]) {
    return this.rival.peek(devices);
  }

  override release(deviceId: string, ids: string[]) {
    return this.rival.release(deviceId, ids);
  }
}

describe('planAndReserve', () => {
  it('makes the plan again when another dispatcher took a place it counted on: the message spills, or waits', async () => {
    const prefix = prefixes.next();
    const [d1, d2, user] = [randomUUID(), randomUUID(), randomUUID()];
    const message = (id: string) => routingMessage(id, { userId: user, createdAt: new Date() });
    const perMinute: RateLimits = { perMinute: 1, perHour: null, perDay: null };
    const record: RoutingRecord = {
      now: new Date(),
      maxQueueSeconds: 3600,
      messages: [message('m1'), message('m2')],
      pools: new Map([[user, [d1, d2]]]),
      paused: new Set(),
      sticky: new Map(),
      rateLimits: new Map([
        [d1, perMinute],
        [d2, perMinute],
      ]),
      budgets: new Map(),
    };
    const pacing = new RacedPacing(new DevicePacing(redis, prefix), d1);
    const { plan, held } = await planAndReserve({ sql, redis, config: { QUEUE_PREFIX: prefix }, pacing, budgets: new DeviceBudgets(redis, prefix) }, record);

    // First plan: m1 on d1, m2 on d2. The rival took d1's place, so m1 could only spill to d2, which m2 filled.
    expect(plan.decisions.get('m2')).toEqual({ action: 'assign', deviceId: d2, simNumber: null });
    const m1 = plan.decisions.get('m1');
    expect(m1).toMatchObject({ action: 'wait', reason: 'paced' });
    // Until a place frees on d1 (the plan made again saw it full), not the second of a refused reservation.
    expect(m1?.action === 'wait' && m1.reason !== 'no_device' && m1.until.getTime() - record.now.getTime()).toBeGreaterThan(50_000);
    expect(held.paced).toEqual(new Map([[d2, ['m2']]]));
    expect(await redis.zrange(`${prefix}:pace:${d1}`, 0, -1)).toEqual(['rival']);
    expect(await redis.zrange(`${prefix}:pace:${d2}`, 0, -1)).toEqual(['m2']);
    expect(await redis.get(`${prefix}:rr:${user}`)).toBe('2');
  });
});
