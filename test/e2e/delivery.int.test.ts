import { describe, expect, it } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * The real processes: one API, two dispatchers, three simulated devices. 1,000 messages in
 * several requests must all end delivered, each sent exactly once, also when a dispatcher is
 * killed with SIGKILL twice during the run.
 */
const MESSAGES = 1000;
const REQUESTS = 10;
const DEVICES = 3;

const openE2e = e2ePerTest('e2e');

async function setUp(env: Record<string, string> = {}): Promise<{ e2e: E2e; client: SmsgwClient }> {
  const e2e = await openE2e();
  const { user, key } = await e2e.user('e2e', 100_000);
  const tokens: string[] = [];
  for (let i = 0; i < DEVICES; i++) tokens.push((await createDevice(e2e.db, { userId: user.id, name: `sim-${i}` })).token);
  const cluster = await e2e.startCluster({
    deviceTokens: tokens,
    env: { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '2', ...env },
    simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2' },
  });
  return { e2e, client: new SmsgwClient(cluster.baseUrl, key) };
}

async function sendAll(client: SmsgwClient, onRequest?: (i: number) => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  const perRequest = MESSAGES / REQUESTS;
  for (let r = 0; r < REQUESTS; r++) {
    const recipients = Array.from({ length: perRequest }, (_, i) => `+1555${String(r * perRequest + i).padStart(7, '0')}`);
    const result = await client.send({ recipients, body: `end-to-end ${r}` });
    ids.push(...result.message_ids);
    await onRequest?.(r);
  }
  return ids;
}

async function waitForDelivered(client: SmsgwClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { total } = await client.listMessages({ status: 'delivered', limit: 1 });
    if (total === MESSAGES) return;
    if (Date.now() > deadline) throw new Error(`only ${total} of ${MESSAGES} delivered within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function expectEachDeliveredOnce(e2e: E2e, client: SmsgwClient, ids: string[]) {
  const counts = Object.fromEntries(
    await Promise.all(
      ['queued', 'sending', 'sent', 'delivered', 'failed'].map(async (status) => [status, (await client.listMessages({ status, limit: 1 })).total]),
    ),
  );
  expect(counts).toEqual({ queued: 0, sending: 0, sent: 0, delivered: MESSAGES, failed: 0 });
  const sent = await sentIds(e2e.logDir);
  expect(sent).toHaveLength(MESSAGES);
  expect(new Set(sent)).toEqual(new Set(ids));
}

describe('end to end', () => {
  it('delivers 1,000 messages sent in 10 requests exactly once through 2 dispatchers and 3 devices', async () => {
    const { e2e, client } = await setUp();
    const ids = await sendAll(client);
    expect(new Set(ids).size).toBe(MESSAGES);
    await waitForDelivered(client, 120_000);
    await expectEachDeliveredOnce(e2e, client, ids);
  }, 240_000);

  it('still delivers every message exactly once when a dispatcher is killed with SIGKILL twice', async () => {
    const { e2e, client } = await setUp();
    const ids = await sendAll(client, async (r) => {
      if (r === 2 || r === 6) {
        await e2e.cluster.kill('dispatcher-0', 'SIGKILL');
        e2e.cluster.startDispatcher('dispatcher-0');
      }
    });
    await waitForDelivered(client, 180_000);
    await expectEachDeliveredOnce(e2e, client, ids);
  }, 300_000);
});
