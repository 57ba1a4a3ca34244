import { describe, expect, it } from 'vitest';
import { numbers, gatewayPerTest, summarizeLog } from './support/fixture.ts';

/**
 * Postgres restarting under load (issue 11, item 2): every request meanwhile answers 503 with
 * Retry-After or succeeds, never 500; nothing is lost or sent twice; the logs stay readable (item 6).
 */
const startGateway = gatewayPerTest();

describe('Postgres restart', () => {
  it('answers 503 while Postgres restarts, never 500, and delivers every message exactly once', async () => {
    const gateway = await startGateway({ devices: 2 });
    const g = gateway;
    const ids: string[] = [];
    // Settled at once, so that a failed send fails the test where it is awaited.
    const sending = (async () => {
      for (let i = 0; i < 30; i++) {
        ids.push(...(await g.send(numbers(i * 10, 10))));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })().then(
      () => null,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    await g.postgres.restart();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await g.postgres.restart();
    const failed = await sending;
    if (failed) throw failed;

    await g.waitForDelivered(300, 90_000);
    const sent = await g.sent();
    expect(sent.length).toBe(300);
    expect(new Set(sent)).toEqual(new Set(ids));
    expect(await g.counts()).toEqual({ delivered: 300 });

    // Every answer of the API, device endpoints included, from its own metrics.
    const metrics = await (await fetch(`${g.cluster.baseUrl}/metrics`)).text();
    const statuses = [...metrics.matchAll(/smsgw_http_request_duration_seconds_count\{[^}]*status_code="(\d+)"[^}]*\} (\d+)/g)];
    expect(statuses.filter(([, status]) => status!.startsWith('5') && status !== '503').map(([line]) => line)).toEqual([]);
    expect(g.statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(g.statuses.some((s) => s === 503) || statuses.some(([, status]) => status === '503')).toBe(true);

    for (const name of ['api', 'dispatcher-0', 'devices']) {
      const log = summarizeLog(g.cluster.output(name));
      expect(log.raw, name).toEqual([]);
      expect(log.errors, name).toEqual([]);
      expect(log.levels.warn ?? 0, name).toBeLessThan(60);
    }
  });
});
