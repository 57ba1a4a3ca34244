import { describe, expect, it, vi } from 'vitest';
import { numbers, gatewayPerTest, summarizeLog, type Gateway } from './support/fixture.ts';

/**
 * Redis restarted empty (issue 11, item 1) and Redis stalled (item 3), with real processes. Nothing
 * is lost or sent twice, no request answers 500, and the logs stay readable (item 6).
 */
const startGateway = gatewayPerTest();

async function expectEachSentOnce(g: Gateway, ids: string[]): Promise<void> {
  const sent = await g.sent();
  expect(sent.length).toBe(ids.length);
  expect(new Set(sent)).toEqual(new Set(ids));
  expect(await g.counts()).toEqual({ delivered: ids.length });
}

describe('Redis restarted empty', () => {
  it('re-creates the sweep schedule by itself and delivers what was sent before and after', async () => {
    // Every message goes through a dispatch job (the API assigns none in the request), so the jobs
    // wiped with Redis leave the stranded ones to the outbox, which only the sweep runs.
    const gateway = await startGateway({ env: { SWEEP_INTERVAL_SECONDS: '1', SEND_ASSIGN_MIN_RECIPIENTS: '1000000' } });
    const before = await gateway.send(numbers(0, 100));
    await gateway.waitForDelivered(100, 30_000);

    // Queued before the wipe and never dispatched: they wait for the outbox, which only the sweep runs.
    await gateway.cluster.signal('dispatcher-0', 'SIGSTOP');
    const stranded = await gateway.send(numbers(100, 200));
    await gateway.redis.restartEmpty();
    await gateway.cluster.signal('dispatcher-0', 'SIGCONT');
    const after: string[] = [];
    for (let i = 0; i < 3; i++) after.push(...(await gateway.send(numbers(300 + i * 100, 100))));

    await gateway.waitForDelivered(600, 60_000);
    await expectEachSentOnce(gateway, [...before, ...stranded, ...after]);
    expect(gateway.statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);

    // The schedule is checked every 2 s: its re-creation may come after the deliveries.
    await vi.waitFor(() => expect(gateway.cluster.output('dispatcher-0').some((line) => line.includes('sweep schedule was missing'))).toBe(true), {
      timeout: 10_000,
      interval: 100,
    });
    const dispatcherLog = summarizeLog(gateway.cluster.output('dispatcher-0'));
    expect(dispatcherLog.raw).toEqual([]);
    expect(summarizeLog(gateway.cluster.output('api')).raw).toEqual([]);
  });
});

describe('Redis stalled', () => {
  it('keeps /health and sends prompt during CLIENT PAUSE and delivers everything afterwards', async () => {
    const gateway = await startGateway();
    const first = await gateway.send(numbers(0, 50));
    await gateway.waitForDelivered(50, 30_000);

    await gateway.redis.pause(6000);
    const pausedAt = Date.now();
    const health = await timed(() => fetch(`${gateway.cluster.baseUrl}/health`));
    expect(health.result.status).toBe(200);
    expect(health.ms).toBeLessThan(1500);

    const sent = await timed(() => gateway.send(numbers(50, 50), { retryForMs: 1 }));
    expect(sent.ms).toBeLessThan(3000);
    expect(Date.now() - pausedAt).toBeLessThan(6000); // all of it happened while Redis was paused

    await gateway.waitForDelivered(100, 60_000);
    await expectEachSentOnce(gateway, [...first, ...sent.result]);
    expect(gateway.statuses.filter((s) => s !== 200 && s !== 202)).toEqual([]);
    for (const name of ['api', 'dispatcher-0']) {
      const log = summarizeLog(gateway.cluster.output(name));
      expect(log.raw).toEqual([]);
      expect(log.errors).toEqual([]);
    }
  });
});

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = Date.now();
  const result = await run();
  return { result, ms: Date.now() - start };
}
