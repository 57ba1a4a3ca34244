import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ReplicaWait, replicaWaitTimeoutMs } from './replica-wait.ts';

// The test Redis has no replica: every WAIT falls short. The failovers themselves are test/topologies'.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
afterAll(() => redis.quit());

const prefix = () => `test-replicas-${randomBytes(6).toString('hex')}`;

describe('ReplicaWait', () => {
  it('sends no command when no replica is asked for (one server)', async () => {
    const pipeline = vi.spyOn(redis, 'pipeline');
    await new ReplicaWait({ redis, prefix: prefix(), replicas: 0, timeoutMs: 50, onShortfall: () => expect.fail('no WAIT') }).afterWrite();
    expect(pipeline).not.toHaveBeenCalled();
    pipeline.mockRestore();
  });

  it('waits up to its time for the replicas, says so when they fall short, then skips the wait for 10 s', async () => {
    let now = 1_000_000;
    const shortfalls: number[] = [];
    const wait = new ReplicaWait({ redis, prefix: prefix(), replicas: 1, timeoutMs: 50, onShortfall: (n) => shortfalls.push(n), now: () => now });
    const started = Date.now();
    await wait.afterWrite();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(shortfalls).toEqual([0]);

    now += 9_999;
    const skipped = Date.now();
    await wait.afterWrite();
    expect(Date.now() - skipped).toBeLessThan(45);
    expect(shortfalls).toEqual([0]);

    now += 1;
    await wait.afterWrite();
    expect(shortfalls).toEqual([0, 0]);
  });

  it('waits half the command timeout, at most a second', () => {
    expect(replicaWaitTimeoutMs(2000)).toBe(1000);
    expect(replicaWaitTimeoutMs(5000)).toBe(1000);
    expect(replicaWaitTimeoutMs(300)).toBe(150);
  });
});
