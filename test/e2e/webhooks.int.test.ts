import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { generateWebhookSecret, newId, verifyWebhook } from '@smsgw/core';
import { createDevice } from '@smsgw/db';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Webhooks over the real processes: the message.delivered events of 1,000 messages go to a
 * loopback receiver that fails about 30% of the requests, and a dispatcher is killed with SIGKILL
 * while deliveries are in flight. Every event must arrive (at least once) with a 2xx answer, and
 * an event that arrives twice carries the same webhook-id both times.
 */
const MESSAGES = 1000;
const REQUESTS = 10;
const DEVICES = 3;
const FAILURE_RATE = 0.3;

interface Arrival {
  messageId: string;
  webhookId: string;
  status: number;
  verified: boolean;
}

const openE2e = e2ePerTest('webhooks');

/** A receiver on loopback that answers 500 to a random share of the requests and 204 to the rest. */
async function startFlakyReceiver(e2e: E2e, secret: () => string): Promise<{ url: string; arrivals: Arrival[] }> {
  const arrivals: Arrival[] = [];
  const base = await e2e.listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = (name: string) => String(req.headers[name] ?? '');
      const status = Math.random() < FAILURE_RATE ? 500 : 204;
      arrivals.push({
        messageId: (JSON.parse(body) as { data: { id: string } }).data.id,
        webhookId: header('webhook-id'),
        status,
        verified: verifyWebhook(secret(), { id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature') }, body),
      });
      res.writeHead(status).end();
    });
  });
  return { url: `${base}/hook`, arrivals };
}

describe('webhooks end to end', () => {
  it('delivers the message.delivered event of each of 1,000 messages through a flaky endpoint and a dispatcher killed with SIGKILL', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const { user, key } = await e2e.user('e2e-webhooks', 100_000);
    const tokens: string[] = [];
    for (let i = 0; i < DEVICES; i++) tokens.push((await createDevice(db, { userId: user.id, name: `sim-${i}` })).token);
    const secret = generateWebhookSecret();
    const receiver = await startFlakyReceiver(e2e, () => secret);
    const webhook = await db.webhook.create({ data: { id: newId(), userId: user.id, url: receiver.url, events: ['message.delivered'], secret } });
    const cluster = await e2e.startCluster({
      deviceTokens: tokens,
      env: {
        WORKER_LOCK_SECONDS: '3',
        SWEEP_INTERVAL_SECONDS: '2',
        // A reports job killed between its commit and the enqueue of the deliveries it wrote runs
        // again but moves nothing (and so enqueues nothing): those deliveries wait for the outbox.
        OUTBOX_AGE_SECONDS: '3',
        // A delivery parked as its endpoint's slot holder was killed can be left without a holder
        // (seen in about 1 run of 6): the outbox takes it once the park counts as overdue.
        WEBHOOK_PARKED_RECHECK_SECONDS: '5',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // Thirteen attempts: the chance that one of 1,000 events fails them all is about 1 in 2,000.
        WEBHOOK_RETRY_DELAYS: '0.1,0.1,0.2,0.2,0.5,0.5,0.5,0.5,1,1,1,1',
        // The slots of the killed dispatcher lapse after the request timeout + 5 s.
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_CONNECT_TIMEOUT_MS: '1000',
        WEBHOOK_ENDPOINT_CONCURRENCY: '16',
      },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2' },
    });
    const client = new SmsgwClient(cluster.baseUrl, key);
    const succeeded = () => new Set(receiver.arrivals.filter((a) => a.status < 300).map((a) => a.messageId));

    const ids: string[] = [];
    const perRequest = MESSAGES / REQUESTS;
    for (let r = 0; r < REQUESTS; r++) {
      const recipients = Array.from({ length: perRequest }, (_, i) => `+1555${String(r * perRequest + i).padStart(7, '0')}`);
      ids.push(...(await client.send({ recipients, body: `webhooks end-to-end ${r}` })).message_ids);
    }
    expect(new Set(ids).size).toBe(MESSAGES);

    // Kill one dispatcher while deliveries are in flight, and start it again.
    await vi.waitFor(() => expect(receiver.arrivals.length).toBeGreaterThanOrEqual(150), { timeout: 30_000, interval: 20 });
    await cluster.kill('dispatcher-0', 'SIGKILL');
    const succeededBeforeKill = succeeded().size;
    cluster.startDispatcher('dispatcher-0');
    expect(succeededBeforeKill).toBeLessThan(MESSAGES);

    await vi.waitFor(() => expect(succeeded().size).toBe(MESSAGES), { timeout: 45_000, interval: 250 });
    expect(succeeded()).toEqual(new Set(ids));
    expect(receiver.arrivals.every((a) => a.verified)).toBe(true);
    expect(receiver.arrivals.filter((a) => a.status === 500).length).toBeGreaterThan(0);

    // One event, one webhook-id, however many times it arrived: the delivery row's id.
    const rows = await db.webhookDelivery.findMany({ where: { webhookId: webhook.id }, select: { id: true, messageId: true, type: true } });
    expect(rows).toHaveLength(MESSAGES);
    const deliveryOf = new Map(rows.map((r) => [r.messageId!, r.id]));
    const mismatched = receiver.arrivals.filter((a) => a.webhookId !== deliveryOf.get(a.messageId));
    expect(mismatched).toEqual([]);
    await vi.waitFor(async () => expect(await db.webhookDelivery.count({ where: { webhookId: webhook.id, state: 'succeeded' } })).toBe(MESSAGES), {
      timeout: 15_000,
      interval: 250,
    });
  }, 120_000);
});
