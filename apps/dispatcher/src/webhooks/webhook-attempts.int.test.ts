import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DispatcherConfigSchema, loadConfig } from '@smsgw/config';
import type { Resolver } from '@smsgw/core';
import { createTestUser, type TestApi } from '@smsgw/api/testing';
import { enqueueWebhookDeliveries } from '@smsgw/queue';
import { applyDeviceReports } from '../handlers/apply-reports.ts';
import { sweep } from '../handlers/sweep.ts';
import { createWebhook, deliveries, payloads, report, sendingMessages, webhookTestbed } from '../testing/webhook-fixtures.ts';
import { EndpointSlots } from './endpoint-slots.ts';

/** How deliveries are attempted: retries, 410, time limits, redirects, per-endpoint concurrency, SSRF, the outbox. */
const bed = webhookTestbed();
const { receiver, dispatcher } = bed;
let api: TestApi;
const log = pino({ level: 'silent' });
/** A retry far enough away that the delivery row stays as the first attempt left it. */
const ONE_SLOW_RETRY = { WEBHOOK_RETRY_DELAYS: '30' };
beforeAll(() => {
  api = bed.api;
});

type Delivery = Awaited<ReturnType<typeof deliveries>>[number];

/** The one delivery of a message, once `done` holds for it. */
async function waitForDelivery(messageId: string, done: (d: Delivery) => boolean): Promise<Delivery> {
  let found: Delivery | undefined;
  await vi.waitFor(
    async () => {
      const rows = await deliveries(api, { messageId });
      expect(rows).toHaveLength(1);
      expect(done(rows[0]!)).toBe(true);
      found = rows[0];
    },
    { timeout: 15_000, interval: 25 },
  );
  return found!;
}

const attempted = (d: { attempts: number }) => d.attempts >= 1;

/** A port nothing listens on now, for a dispatcher's METRICS_PORT. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

describe('retries', () => {
  it('tries again after 500s with the same webhook-id and body until a 2xx, then records the success', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver((n) => (n <= 3 ? 500 : 200));
    const { secret } = await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    await dispatcher();
    await report(api, user, 'sent', [id!]);

    const row = await waitForDelivery(id!, (d) => d.state !== 'pending');

    expect([row.state, row.attempts, row.lastStatusCode, row.lastError, row.nextAttemptAt]).toEqual(['succeeded', 4, 200, null, null]);
    expect(target.received).toHaveLength(4);
    expect(new Set(target.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([row.id]));
    expect(new Set(target.received.map((r) => r.body)).size).toBe(1);
    for (const request of target.received) new StandardWebhook(secret).verify(request.body, request.headers as Record<string, string>);
  });

  it('gives up when the retry schedule is spent: failed after one attempt more than there are delays', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver(() => 503);
    await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    await dispatcher({ WEBHOOK_RETRY_DELAYS: '0.05,0.05,0.05' });
    await report(api, user, 'sent', [id!]);

    const row = await waitForDelivery(id!, (d) => d.state !== 'pending');

    expect([row.state, row.attempts, row.lastStatusCode, row.nextAttemptAt]).toEqual(['failed', 4, 503, null]);
    expect(row.lastError).toBe('Answered 503. Gave up after 4 attempts.');
    expect(target.received).toHaveLength(4);
  });

  it("counts every try on the dispatcher's metrics by outcome: retries, giving up, success", async () => {
    const [failing, working] = [await createTestUser(api.db), await createTestUser(api.db)];
    await createWebhook(api, failing.userId, (await receiver(() => 503)).url);
    await createWebhook(api, working.userId, (await receiver(() => 204)).url);
    const [lost] = await sendingMessages(api, failing);
    const [fine] = await sendingMessages(api, working);
    const port = await freePort();
    await dispatcher({ WEBHOOK_RETRY_DELAYS: '0.05,0.05', METRICS_PORT: String(port) });
    await report(api, failing, 'sent', [lost!]);
    await report(api, working, 'sent', [fine!]);
    await waitForDelivery(lost!, (d) => d.state === 'failed');
    await waitForDelivery(fine!, (d) => d.state === 'succeeded');

    // The count follows the delivery's row by a moment.
    await vi.waitFor(async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const tries = Object.fromEntries([...text.matchAll(/^smsgw_webhook_attempts_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      expect(tries).toEqual({ succeeded: 1, retry: 2, failed: 1, disabled: 0, skipped: 0 });
    });
  });
});

describe('410 Gone', () => {
  it('disables the endpoint and fails the delivery; later events of the user write no delivery to it', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver(() => 410);
    const hook = await createWebhook(api, user.userId, target.url);
    const [first, later] = await sendingMessages(api, user, 2);
    await dispatcher();
    await report(api, user, 'sent', [first!]);

    const row = await waitForDelivery(first!, (d) => d.state !== 'pending');
    expect([row.state, row.attempts, row.lastStatusCode, row.nextAttemptAt]).toEqual(['failed', 1, 410, null]);
    const endpoint = await api.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabledReason).toMatch(/410 Gone/);

    // The transition's statement joins enabled endpoints only: the event is not written at all.
    await report(api, user, 'sent', [later!]);
    await vi.waitFor(async () => expect((await api.db.message.findUniqueOrThrow({ where: { id: later! } })).state).toBe('sent'), { timeout: 15_000 });
    expect(await deliveries(api, { messageId: later! })).toEqual([]);
    expect(target.received).toHaveLength(1);
  });

  it('does not send a delivery written before its endpoint was disabled, and says why', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    const hook = await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    const applied = await applyDeviceReports(api.sql, [
      { deviceId: user.devices[0]!.id, receivedAt: new Date().toISOString(), reports: [{ id: id!, status: 'sent' }] },
    ]);
    expect(applied.deliveries).toHaveLength(1);
    await api.db.webhook.update({ where: { id: hook.id }, data: { enabled: false } });
    await enqueueWebhookDeliveries(api.app.webhooksQueue, applied.deliveries);
    await dispatcher();

    const row = await waitForDelivery(id!, (d) => d.state !== 'pending');

    expect([row.state, row.attempts, row.lastError]).toEqual(['failed', 0, 'Not sent: the endpoint is disabled.']);
    expect(target.received).toEqual([]);
  });
});

describe('time limits and redirects', () => {
  it('cuts off an endpoint that never answers at WEBHOOK_TIMEOUT_MS and schedules a retry', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver(() => 'hang');
    await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    await dispatcher({ WEBHOOK_TIMEOUT_MS: '1000', ...ONE_SLOW_RETRY });
    await report(api, user, 'sent', [id!]);

    const row = await waitForDelivery(id!, attempted);

    expect([row.state, row.attempts, row.lastStatusCode]).toEqual(['pending', 1, null]);
    expect(row.lastError).toBe('No complete response within 1000 ms.');
    const retryIn = row.nextAttemptAt!.getTime() - row.lastAttemptAt!.getTime();
    expect(retryIn).toBeGreaterThanOrEqual(24_000);
    expect(retryIn).toBeLessThanOrEqual(36_000);
    // The request was open about a second (it arrived after the connect, so a little less), not more.
    const [request] = target.received;
    expect(target.received).toHaveLength(1);
    await vi.waitFor(() => expect(request!.closedAt).not.toBeNull());
    const open = request!.closedAt! - request!.at;
    expect(open).toBeGreaterThan(500);
    expect(open).toBeLessThan(1000 + 2000);
  });

  it('does not follow a redirect: the attempt records the 3xx and the other receiver gets nothing', async () => {
    const user = await createTestUser(api.db);
    const elsewhere = await receiver();
    const target = await receiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
    await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    await dispatcher(ONE_SLOW_RETRY);
    await report(api, user, 'sent', [id!]);

    const row = await waitForDelivery(id!, attempted);

    expect([row.state, row.attempts, row.lastStatusCode, row.lastError]).toEqual(['pending', 1, 302, 'Answered 302; redirects are not followed.']);
    expect(target.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
  });
});

describe('per-endpoint concurrency', () => {
  it("keeps a hanging endpoint to WEBHOOK_ENDPOINT_CONCURRENCY requests, so another user's event goes out at once", async () => {
    const [a, b] = [await createTestUser(api.db), await createTestUser(api.db)];
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver();
    await createWebhook(api, a.userId, hanging.url);
    await createWebhook(api, b.userId, healthy.url);
    const idsA = await sendingMessages(api, a, 20);
    const [idB] = await sendingMessages(api, b);
    const timeoutMs = 4000;
    // Without the per-endpoint limit, A's 20 deliveries would take all 8 workers until they time out.
    await dispatcher({ WEBHOOK_CONCURRENCY: '8', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: String(timeoutMs), ...ONE_SLOW_RETRY });
    await report(api, a, 'sent', idsA);
    await vi.waitFor(() => expect(hanging.received.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });

    const reportedAt = Date.now();
    await report(api, b, 'sent', [idB!]);
    await vi.waitFor(() => expect(healthy.received).toHaveLength(1), { timeout: 10_000 });

    // B's event went out while all of A's requests were still hanging, long before they time out.
    const [arrived] = healthy.received;
    expect(arrived!.at - reportedAt).toBeLessThan(timeoutMs / 2);
    expect(hanging.received.every((r) => r.closedAt === null)).toBe(true);
    expect(payloads(healthy).map((p) => p.data.id)).toEqual([idB]);

    // As A's requests time out, others of A take their slots, never more than two at once.
    await vi.waitFor(() => expect(hanging.received.length).toBeGreaterThanOrEqual(4), { timeout: 15_000 });
    expect(hanging.maxInFlight()).toBe(2);
  });

  it('delivers a backlog through one slot: parked deliveries are taken in turn by the holder, one request at a time', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    const webhook = await createWebhook(api, user.userId, target.url);
    const ids = await sendingMessages(api, user, 40);
    await dispatcher({ WEBHOOK_ENDPOINT_CONCURRENCY: '1' });
    await report(api, user, 'sent', ids);

    await vi.waitFor(() => expect(new Set(payloads(target).map((p) => p.data.id)).size).toBe(40), { timeout: 20_000 });
    expect(target.maxInFlight()).toBe(1);
    await vi.waitFor(
      async () => {
        const rows = await deliveries(api, { webhookId: webhook.id });
        expect(rows.map((d) => [d.state, d.attempts, d.nextAttemptAt])).toEqual(rows.map(() => ['succeeded', 1, null]));
      },
      { timeout: 10_000 },
    );
    // Nothing stays parked or holds the slot.
    const keys = await api.app.redis.keys(`${api.config.QUEUE_PREFIX}:webhook-*:${webhook.id}`);
    expect(keys).toEqual([]);
  });
});

describe('SSRF at connect time', () => {
  it('never connects to an internal address, literal or resolved, when WEBHOOK_ALLOW_PRIVATE is off, and records why', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    // Endpoints that the rules (or the DNS answer) no longer allow, written as if registered before.
    const loopback = await createWebhook(api, user.userId, `http://127.0.0.1:${target.port}/hook`);
    const mapped = await createWebhook(api, user.userId, `http://[::ffff:127.0.0.1]:${target.port}/hook`);
    const renamed = await createWebhook(api, user.userId, `http://hooks.example.test:${target.port}/hook`);
    const resolved: string[] = [];
    const resolver: Resolver = async (host) => {
      resolved.push(host);
      if (host === 'hooks.example.test') return ['10.0.0.7'];
      throw new Error(`unexpected lookup of ${host}`);
    };
    const [id] = await sendingMessages(api, user);
    await dispatcher({ WEBHOOK_ALLOW_PRIVATE: 'false', ...ONE_SLOW_RETRY }, resolver);
    await report(api, user, 'sent', [id!]);

    let rows: Delivery[] = [];
    await vi.waitFor(
      async () => {
        rows = await deliveries(api, { messageId: id! });
        expect(rows.filter((d) => d.attempts === 1)).toHaveLength(3);
      },
      { timeout: 15_000 },
    );
    const of = (webhookId: string) => rows.find((d) => d.webhookId === webhookId)!;

    for (const row of rows) expect([row.state, row.lastStatusCode]).toEqual(['pending', null]);
    expect(of(loopback.id).lastError).toMatch(/^The address 127\.0\.0\.1 is a loopback, private or otherwise internal address/);
    expect(of(mapped.id).lastError).toMatch(/^The address ::ffff:7f00:1 is a loopback, private or otherwise internal address/);
    expect(of(renamed.id).lastError).toMatch(/^The host hooks\.example\.test resolves to 10\.0\.0\.7, a loopback, private or otherwise internal address/);
    expect(resolved).toEqual(['hooks.example.test']);
    expect(target.received).toEqual([]);
  });
});

describe('the webhook outbox', () => {
  it('enqueues again a pending delivery whose job was lost, once overdue, and it is then delivered', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    await createWebhook(api, user.userId, target.url);
    const [id] = await sendingMessages(api, user);
    const {
      deliveries: [delivery],
    } = await applyDeviceReports(api.sql, [
      {
        deviceId: user.devices[0]!.id,
        receivedAt: new Date().toISOString(),
        reports: [{ id: id!, status: 'sent' }],
      },
    ]);
    const deliveryId = delivery!.id;
    const queue = api.app.webhooksQueue;
    await enqueueWebhookDeliveries(queue, [delivery!]);
    await queue.remove(deliveryId);
    expect(await queue.getJob(deliveryId)).toBeUndefined();

    const config = loadConfig(DispatcherConfigSchema, {
      DATABASE_URL: api.config.DATABASE_URL,
      REDIS_URL: api.config.REDIS_URL,
      QUEUE_PREFIX: api.config.QUEUE_PREFIX,
      LOG_LEVEL: 'silent',
    });
    const sweepAt = (seconds: number) =>
      sweep(
        {
          sql: api.sql,
          redis: api.app.redis,
          dispatchQueue: api.queue,
          webhooksQueue: queue,
          slots: new EndpointSlots(api.app.redis, api.config.QUEUE_PREFIX, 8, 20_000),
          config,
          log,
        },
        new Date(Date.now() + seconds * 1000),
      );
    expect((await sweepAt(config.OUTBOX_AGE_SECONDS - 5)).webhooksEnqueued).toBe(0);
    expect(await queue.getJob(deliveryId)).toBeUndefined();
    // Other tests leave pending deliveries too: at least this one.
    expect((await sweepAt(config.OUTBOX_AGE_SECONDS + 1)).webhooksEnqueued).toBeGreaterThanOrEqual(1);
    expect((await queue.getJob(deliveryId))?.data).toEqual({ deliveryId, webhookId: delivery!.webhookId });

    await dispatcher();
    const row = await waitForDelivery(id!, (d) => d.state !== 'pending');
    expect([row.id, row.state, row.attempts]).toEqual([deliveryId, 'succeeded', 1]);
    expect(target.received.map((r) => r.headers['webhook-id'])).toEqual([deliveryId]);
  });
});
