import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { numbers, gatewayPerTest } from './support/fixture.ts';

/**
 * A retry after the API died in the middle of a send (issue 11, item 5): the key held nothing, so
 * the retry is taken at once, and the messages exist once.
 */
const startGateway = gatewayPerTest();

describe('idempotent retry after a crash', () => {
  it('takes the retry of a send whose API was SIGKILLed mid-transaction at once, and sends each message once', async () => {
    const gateway = await startGateway({ devices: 1 });
    const g = gateway;
    const first = await g.send(numbers(0, 1)); // the user's quota row exists from here on
    await g.waitForDelivered(1, 30_000);

    // Hold the quota row, so that the next send stops inside its transaction, after its key.
    const blocker = new pg.Client({ connectionString: g.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT * FROM quota_usage FOR UPDATE');
    const key = 'retry-after-crash';
    const doomed = fetch(`${g.cluster.baseUrl}/api/sms/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': g.key, 'idempotency-key': key },
      body: JSON.stringify({ recipients: numbers(1, 50), body: 'fault suite' }),
    }).then(
      (r) => r.status,
      () => 'connection lost',
    );
    for (;;) {
      const { rows } = await blocker.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
      );
      if (rows[0]!.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await g.cluster.kill('api', 'SIGKILL');
    expect(await doomed).toBe('connection lost');
    await blocker.query('ROLLBACK');
    await blocker.end();

    await g.cluster.startApi();
    const started = Date.now();
    const retried = await g.send(numbers(1, 50), { idempotencyKey: key, retryForMs: 5000 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(g.statuses.at(-1)).toBe(200);

    await g.waitForDelivered(51, 60_000);
    const sent = await g.sent();
    expect(sent.length).toBe(51);
    expect(new Set(sent)).toEqual(new Set([...first, ...retried]));
  });
});
