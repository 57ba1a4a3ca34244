import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { applyReports } from '@smsgw/db';
import { createTestUser, startTestApi, type TestApi } from '@smsgw/api/testing';
import { startDeviceSim } from '@smsgw/device-sim';
import { sweepSteps } from '../testing/sweep-steps.ts';
import { startTestDispatcher } from '../testing/test-dispatcher.ts';
import { sweep } from './sweep.ts';
import { EndpointSlots } from '../webhooks/endpoint-slots.ts';

/** The sweep's expiry (MESSAGE_TTL_SECONDS), outbox (OUTBOX_AGE_SECONDS) and retention. */
let api: TestApi;
/** What a test started (dispatchers, simulators), closed after it in reverse order. */
const started: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});
afterAll(async () => {
  await api?.close();
});
const log = pino({ level: 'silent' });
const { dispatcherConfig, sweepAt, sendOne, assign, message, events, offer, jobData } = sweepSteps(() => api);

describe('expiry (MESSAGE_TTL_SECONDS)', () => {
  const DAY = 86_400;
  // MAX_QUEUE_SECONDS (10 hours) would fail them first: here it is set beyond the TTL, which stays the hard cap.
  const ttlOnly = () => dispatcherConfig({ MAX_QUEUE_SECONDS: String(2 * DAY) });

  it('fails a pending message older than the TTL as expired', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 1 });
    const id = await sendOne(apiKey, { dropJob: true });

    await sweepAt(DAY - 60, ttlOnly());
    expect((await message(id)).state).toBe('pending');
    const result = await sweepAt(DAY + 1, ttlOnly());

    expect(result.expired).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.error]).toEqual(['failed', 'Expired: no device took the message within 86400 seconds.']);
    expect((await events(id)).map((e) => e.state)).toEqual(['failed']);
  });

  it('fails an assigned message never offered, older than the TTL, as expired, without first handing it back to round-robin', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(DAY + 1, ttlOnly());

    const row = await message(id);
    expect([row.state, row.error]).toEqual(['failed', 'Expired: no device took the message within 86400 seconds.']);
    expect(await jobData(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'failed']);
  });

  it('expires a message for a named device that never claimed it', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { deviceId: devices[0]!.id, dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(DAY + 1, ttlOnly());

    expect(await message(id)).toMatchObject({ state: 'failed', deviceId: devices[0]!.id, error: expect.stringMatching(/^Expired/) });
  });

  it('leaves sent and delivered messages alone, however old', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const sentId = await sendOne(apiKey, { dropJob: true });
    const deliveredId = await sendOne(apiKey, { dropJob: true });
    for (const id of [sentId, deliveredId]) await assign(id, device.id);
    await offer(device.id);
    const now = new Date();
    expect((await applyReports(api.sql, { status: 'sent', reports: [{ id: sentId, deviceId: device.id, at: now, error: null }], now })).moved).toEqual([
      sentId,
    ]);
    expect(
      (await applyReports(api.sql, { status: 'delivered', reports: [{ id: deliveredId, deviceId: device.id, at: now, error: null }], now })).moved,
    ).toEqual([deliveredId]);
    const before = await Promise.all([message(sentId), message(deliveredId)]);

    await sweepAt(3 * DAY);

    expect(await Promise.all([message(sentId), message(deliveredId)])).toEqual(before);
    expect(before.map((m) => m.state)).toEqual(['sent', 'delivered']);
  });
});

describe('the outbox (OUTBOX_AGE_SECONDS)', () => {
  it('enqueues again a pending message whose job was lost, once old enough, and it is then delivered', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });

    await sweepAt(29);
    expect(await jobData(id)).toBeUndefined();
    const result = await sweepAt(31);
    expect(result.outboxEnqueued).toBeGreaterThanOrEqual(1);
    expect(await jobData(id)).toEqual({ messageId: id });

    // A dispatcher and a phone take it from there.
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    started.push(await startTestDispatcher(api));
    const sim = await startDeviceSim(
      loadConfig(DeviceSimConfigSchema, { SMSGW_URL: baseUrl, DEVICE_TOKEN: device.token, SIM_SEND_MS: '0', SIM_DELIVER_MS: '0', LOG_LEVEL: 'silent' }),
      log,
    );
    started.push(sim);

    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });
    expect(sim.sent).toEqual([id]);
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'sent', 'delivered']);
  });

  it('adds no second job for a pending message whose job is still there', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 1 });
    const id = await sendOne(apiKey);
    const job = await api.queue.getJob(id);
    expect(job).toBeDefined();

    await sweepAt(31);

    // The job id is the message id: the job found is the one the send added, untouched.
    const after = await api.queue.getJob(id);
    expect({ timestamp: after?.timestamp, state: await after?.getState() }).toEqual({ timestamp: job!.timestamp, state: 'waiting' });
  });
});

describe('retention', () => {
  const DAY = 86_400_000;

  it('deletes Idempotency-Keys after 24 hours, and finished webhook deliveries after WEBHOOK_DELIVERY_RETENTION_DAYS, but never a pending one', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const now = Date.now();
    const key = (name: string, ageMs: number) =>
      api.db.idempotencyKey.create({ data: { userId, key: name, requestHash: Buffer.alloc(32), createdAt: new Date(now - ageMs) } });
    await key('old', DAY + 60_000);
    await key('recent', DAY - 60_000);

    const webhook = await api.db.webhook.create({
      data: { id: newId(), userId, url: 'https://hooks.example.com/x', events: ['message.sent'], secret: generateWebhookSecret() },
    });
    const delivery = (state: 'pending' | 'succeeded' | 'failed', ageDays: number) =>
      api.db.webhookDelivery.create({
        data: {
          id: newId(),
          webhookId: webhook.id,
          userId,
          type: 'webhook.test',
          occurredAt: new Date(),
          data: {},
          state,
          nextAttemptAt: state === 'pending' ? new Date(now + DAY) : null,
          createdAt: new Date(now - ageDays * DAY),
        },
      });
    const oldSucceeded = await delivery('succeeded', 8);
    const oldFailed = await delivery('failed', 8);
    const oldPending = await delivery('pending', 8);
    const recent = await delivery('succeeded', 6);

    const result = await sweep(
      {
        sql: api.sql,
        redis: api.app.redis,
        dispatchQueue: api.queue,
        webhooksQueue: api.app.webhooksQueue,
        slots: new EndpointSlots(api.app.redis, api.config.QUEUE_PREFIX, 8, 20_000),
        config: dispatcherConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '7' }),
        log,
      },
      new Date(now),
    );

    expect(result.idempotencyKeysPurged).toBeGreaterThanOrEqual(1);
    expect((await api.db.idempotencyKey.findMany({ where: { userId } })).map((k) => k.key)).toEqual(['recent']);
    expect(result.webhookDeliveriesPurged).toBeGreaterThanOrEqual(2);
    const left = await api.db.webhookDelivery.findMany({ where: { webhookId: webhook.id }, select: { id: true } });
    expect(new Set(left.map((d) => d.id))).toEqual(new Set([oldPending.id, recent.id]));
    expect([oldSucceeded.id, oldFailed.id].some((id) => left.some((d) => d.id === id))).toBe(false);
  });
});
