import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DevicePacing } from './device-pacing.ts';
import { testPrefixes } from './testing/test-prefixes.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const other = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefixes = testPrefixes('pace');
afterAll(async () => {
  await prefixes.remove(redis);
  await Promise.all([redis.quit(), other.quit()]);
});

const prefix = prefixes.next;
const ids = (n: number) => Array.from({ length: n }, () => randomUUID());

describe('DevicePacing', () => {
  it('hands at most the limit in a window, says when a place frees, and lets unlimited devices take everything', async () => {
    const pacing = new DevicePacing(redis, prefix());
    const device = randomUUID();
    const minute = [{ windowMs: 60_000, limit: 6 }];
    expect(await pacing.take(device, minute, ids(4))).toEqual({ taken: 4, retryInMs: 0 });
    const second = await pacing.take(device, minute, ids(5));
    expect(second.taken).toBe(2);
    expect(second.retryInMs).toBeGreaterThan(55_000);
    expect(second.retryInMs).toBeLessThanOrEqual(60_000);
    expect(await pacing.take(device, minute, ids(1))).toEqual({ taken: 0, retryInMs: expect.any(Number) });
    expect(await pacing.take(randomUUID(), [], ids(500))).toEqual({ taken: 500, retryInMs: 0 });
  });

  it('applies every window: the smallest room wins', async () => {
    const pacing = new DevicePacing(redis, prefix());
    const device = randomUUID();
    const windows = [
      { windowMs: 60_000, limit: 10 },
      { windowMs: 3_600_000, limit: 3 },
    ];
    const first = await pacing.take(device, windows, ids(5));
    expect(first.taken).toBe(3);
    expect(first.retryInMs).toBeGreaterThan(3_500_000);
  });

  it('frees the place of a message given back, and forgets hand-outs older than the window', async () => {
    const p = prefix();
    const pacing = new DevicePacing(redis, p);
    const device = randomUUID();
    const window = [{ windowMs: 300, limit: 2 }];
    const [a, b, c] = ids(3);
    expect((await pacing.take(device, window, [a!, b!, c!])).taken).toBe(2);
    await pacing.release(device, [b!]);
    expect((await pacing.take(device, window, [c!])).taken).toBe(1);
    expect((await pacing.take(device, window, ids(1))).taken).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 350)); // the window itself is what is tested
    expect((await pacing.take(device, window, ids(3))).taken).toBe(2);
  });

  it('is exact across dispatchers taking at once', async () => {
    const p = prefix();
    const device = randomUUID();
    const window = [{ windowMs: 60_000, limit: 6 }];
    const one = new DevicePacing(redis, p);
    const two = new DevicePacing(other, p);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).take(device, window, ids(1))));
    expect(results.reduce((sum, r) => sum + r.taken, 0)).toBe(6);
    expect(await redis.zcard(`${p}:pace:${device}`)).toBe(6);
  });
});
