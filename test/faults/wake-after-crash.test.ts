import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { gatewayPerTest, numbers } from './support/fixture.ts';

/**
 * Issue 27, item 3: an API that assigned a send itself and died before its wake-up went out. Its
 * device holds its stream on another API process, so nothing tells it of the message but the
 * sweep, which wakes devices whose assigned messages wait (WAKE_AGAIN_AFTER_SECONDS, 30 s). Neither
 * the devices' safety-net poll nor the lease (which would give the message to a device again) comes
 * within the test's time.
 */
const startGateway = gatewayPerTest();

describe('an API killed between its assignment and the wake-up', () => {
  it('delivers the message once: the sweep wakes its device', async () => {
    const g = await startGateway({ devices: 1, env: { ASSIGN_LEASE_SECONDS: '3600', SEND_ASSIGN_MIN_RECIPIENTS: '1' }, simEnv: { SIM_POLL_SECONDS: '3600' } });
    const first = await g.send(numbers(0, 1));
    await g.waitForDelivered(1, 30_000);

    const db = new pg.Client({ connectionString: g.databaseUrl });
    await db.connect();
    const redis = new Redis(g.redis.url);
    try {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM devices');
      const other = await g.cluster.startOtherApi('api-2');
      // Writes stall (PUBLISH among them): the named device needs no Redis before the commit, so the
      // send's assignment commits and then waits on its wake-up, where the API is killed.
      await redis.call('CLIENT', 'PAUSE', '30000', 'WRITE');
      const doomed = fetch(`${other}/api/sms/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': g.key },
        body: JSON.stringify({ recipients: numbers(1, 1), body: 'assigned, never woken', device_id: rows[0]!.id }),
      }).then(
        (r) => r.status,
        () => 'connection lost',
      );
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { rows: assigned } = await db.query("SELECT 1 FROM messages WHERE state = 'assigned' AND offered_at IS NULL");
        if (assigned.length === 1) break;
        if (Date.now() > deadline) throw new Error(`the send did not commit its assignment: ${JSON.stringify(await g.counts())}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await g.cluster.kill('api-2', 'SIGKILL');
      await redis.call('CLIENT', 'UNPAUSE');
      // The send answers before its assignment ends (200), unless the kill came first.
      expect([200, 'connection lost']).toContain(await doomed);

      await g.waitForDelivered(2, 60_000);
      const sent = await g.sent();
      expect(sent.length).toBe(2);
      const { rows: messages } = await db.query<{ id: string }>('SELECT id FROM messages');
      expect(new Set(sent)).toEqual(new Set(messages.map((m) => m.id)));
      expect(sent).toContain(first[0]);
      // The dispatcher's log arrives through a pipe: it may come after the delivery it led to.
      await vi.waitFor(() => expect(g.cluster.output('dispatcher-0').some((line) => line.includes('"devicesWokenAgain":1'))).toBe(true), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await redis.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      redis.disconnect();
      await db.end();
    }
  }, 180_000);
});
