import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, DispatcherConfigSchema, loadConfig, type DispatcherConfig } from '@smsgw/config';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { applyReports, assignMessages, offerMessages } from '@smsgw/db';
import { createSubscriberConnection, wakeupChannel } from '@smsgw/queue';
import { createTestUser, send, startTestApi, uniquePhone as phone, type TestApi } from '@smsgw/api/testing';
import { startDeviceSim } from '@smsgw/device-sim';
import { startTestDispatcher } from '../testing/test-dispatcher.ts';
import { sweep } from './sweep.ts';
import { EndpointSlots } from '../webhooks/endpoint-slots.ts';

let api: TestApi;
/** What a test started (dispatchers, simulators), closed after it in reverse order. */
const started: { close(): Promise<void> }[] = [];
const log = pino({ level: 'silent' });

beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});
afterAll(async () => {
  await api?.close();
});

/** The default dispatcher settings (docs/devices.md, "Delivery"): 60 s, 3 assignments, an hour + 5 minutes of skew, 24 hours; outbox after 30 s. */
function dispatcherConfig(env: Record<string, string> = {}): DispatcherConfig {
  return loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/** One sweep as the dispatcher runs it, at `secondsFromNow` in the future (so no lease has to be waited for). */
function sweepAt(secondsFromNow: number, config = dispatcherConfig()) {
  return sweep(
    {
      sql: api.sql,
      redis: api.app.redis,
      dispatchQueue: api.queue,
      webhooksQueue: api.app.webhooksQueue,
      slots: new EndpointSlots(api.app.redis, api.config.QUEUE_PREFIX, 8, 20_000),
      config,
      log,
    },
    new Date(Date.now() + secondsFromNow * 1000),
  );
}

/** Sends one message through the API; with `dropJob` its dispatch job is removed (no dispatcher runs then). */
async function sendOne(apiKey: string, options: { deviceId?: string; dropJob?: boolean } = {}): Promise<string> {
  const res = await send(api.app, apiKey, { recipients: [phone()], body: 'lease test', ...(options.deviceId && { device_id: options.deviceId }) });
  expect(res.statusCode).toBe(200);
  const [id] = res.json().message_ids as string[];
  if (options.dropJob) {
    await api.queue.remove(id!);
    expect(await api.queue.getJob(id!)).toBeUndefined();
  }
  return id!;
}

async function assign(id: string, deviceId: string): Promise<void> {
  expect(await assignMessages(api.sql, { assignments: [{ id, deviceId }], now: new Date() })).toEqual([{ id, deviceId }]);
}

function message(id: string) {
  return api.db.message.findUniqueOrThrow({ where: { id } });
}

async function events(id: string): Promise<{ state: string; detail: string | null }[]> {
  const rows = await api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });
  return rows.map((r) => ({ state: r.state, detail: r.detail }));
}

/** Offers the device its messages, as a claim or a pull does; returns their ids. */
async function offer(deviceId: string): Promise<string[]> {
  return (await offerMessages(api.sql, { deviceId, limit: 10, order: 'oldest', now: new Date() })).map((m) => m.id);
}

async function acknowledge(deviceId: string, id: string): Promise<void> {
  const now = new Date();
  expect((await applyReports(api.sql, { status: 'sending', reports: [{ id, deviceId, at: now, error: null }], now })).moved).toEqual([id]);
}

async function jobData(id: string): Promise<unknown> {
  return (await api.queue.getJob(id))?.data;
}

describe('the assignment lease (ASSIGN_LEASE_SECONDS)', () => {
  it('puts an assigned message not claimed in time back to pending and enqueues its dispatch job again', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(59);
    expect((await message(id)).state).toBe('assigned');
    expect(await jobData(id)).toBeUndefined();

    const result = await sweepAt(61);

    expect(result.reassigned).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.assignments, row.error]).toEqual(['pending', 1, null]);
    expect(await jobData(id)).toEqual({ messageId: id });
    expect((await events(id)).at(-1)).toEqual({ state: 'pending', detail: 'Not taken by the device in time; assigned again.' });
  });

  it('moves it to the other device each time (dispatcher running), then fails it after MAX_ASSIGNMENTS with an error saying so', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    started.push(await startTestDispatcher(api));
    const id = await sendOne(apiKey);

    const assignedTo = async (assignments: number) => {
      await vi.waitFor(async () => expect(await message(id)).toMatchObject({ state: 'assigned', assignments }), { timeout: 15_000 });
      return (await message(id)).deviceId!;
    };
    const first = await assignedTo(1);
    await sweepAt(61);
    const second = await assignedTo(2);
    await sweepAt(61);
    const third = await assignedTo(3);

    expect(new Set([first, second])).toEqual(new Set(devices.map((d) => d.id)));
    expect(third).toBe(first);

    const result = await sweepAt(61);

    expect(result.unclaimedFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.assignments, row.failedAt !== null]).toEqual(['failed', 3, true]);
    expect(row.error).toBe('No device claimed the message after 3 assignments of 60 seconds.');
    expect(await jobData(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'pending', 'assigned', 'pending', 'assigned', 'failed']);
  });

  it('moves it to another device even when the round-robin cursor points back at the device it left', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 2 });
    started.push(await startTestDispatcher(api));
    const waitAssigned = (id: string) =>
      vi.waitFor(async () => expect((await message(id)).state).toBe('assigned'), { timeout: 15_000 }).then(() => message(id));

    // Slot 0 goes to one device, slot 1 to the other, which claims its message at once.
    const left = await waitAssigned(await sendOne(apiKey));
    const other = await waitAssigned(await sendOne(apiKey));
    expect(other.deviceId).not.toBe(left.deviceId);
    const claimed = await offer(other.deviceId!);
    expect(claimed).toEqual([other.id]);

    // Only the message never offered is released; the next slot (2) is the device it was on.
    await sweepAt(61);

    await vi.waitFor(async () => expect(await message(left.id)).toMatchObject({ state: 'assigned', assignments: 2 }), { timeout: 15_000 });
    expect((await message(left.id)).deviceId).toBe(other.deviceId);
  });

  it('leaves the queue of a device that is taking messages alone, however long it waits, and moves it once the device stops', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const busy = devices[0]!;
    const waiting = await sendOne(apiKey, { dropJob: true });
    await assign(waiting, busy.id);
    // The device took other messages 30 s into the lease (a phone working through a long queue).
    await api.db.device.update({ where: { id: busy.id }, data: { offeredAt: new Date(Date.now() + 30_000) } });

    await sweepAt(61);
    expect(await message(waiting)).toMatchObject({ state: 'assigned', deviceId: busy.id, offeredAt: null });

    // 60 s after it last took anything, its waiting messages go back to round-robin.
    await sweepAt(91);
    expect(await message(waiting)).toMatchObject({ state: 'pending', assignments: 1 });
    expect(await jobData(waiting)).toEqual({ messageId: waiting });
  });

  it('records on the device that it takes messages when it is offered some', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    expect(await offer(device.id)).toEqual([]);
    expect((await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).offeredAt).toBeNull();
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    const before = Date.now();

    expect(await offer(device.id)).toEqual([id]);

    const { offeredAt } = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect(offeredAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('follows the configured lease and limit (ASSIGN_LEASE_SECONDS=5, MAX_ASSIGNMENTS=1)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const config = dispatcherConfig({ ASSIGN_LEASE_SECONDS: '5', MAX_ASSIGNMENTS: '1' });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(4, config);
    expect((await message(id)).state).toBe('assigned');
    await sweepAt(6, config);

    const row = await message(id);
    expect([row.state, row.error]).toEqual(['failed', 'No device claimed the message after 1 assignments of 5 seconds.']);
    expect(await jobData(id)).toBeUndefined();
  });

  it('never moves a message for a named device: it stays assigned to it, however many leases pass', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const named = devices[1]!;
    const id = await sendOne(apiKey, { deviceId: named.id, dropJob: true });
    await assign(id, named.id);

    for (const seconds of [61, 3600, 6 * 3600]) await sweepAt(seconds);

    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments, row.error]).toEqual(['assigned', named.id, 1, null]);
    expect(await jobData(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned']);
  });
});

describe('an offered message stays with its device', () => {
  it('is never handed back to round-robin by the assignment lease, however many leases pass', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);
    expect(await offer(devices[0]!.id)).toEqual([id]);

    for (const seconds of [61, 600, 3000]) await sweepAt(seconds);

    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments, row.error]).toEqual(['assigned', devices[0]!.id, 1, null]);
    expect(await jobData(id)).toBeUndefined();
    // It is offered to that device again.
    expect(await offer(devices[0]!.id)).toEqual([id]);
    expect(await offer(devices[1]!.id)).toEqual([]);
  });
});

describe('the sending lease (SENDING_LEASE_SECONDS from the first offer, plus DEVICE_CLOCK_SKEW_SECONDS)', () => {
  it('fails an acknowledged message with no result in time ("did not report") and never enqueues it again', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);
    await acknowledge(device.id, id);

    await sweepAt(3600 + 299);
    expect((await message(id)).state).toBe('sending');

    const result = await sweepAt(3600 + 301);

    expect(result.sendingFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.deviceId, row.sentAt]).toEqual(['failed', device.id, null]);
    expect(row.error).toContain('did not report a result');
    expect(row.error).toContain('not sent again');
    expect(await jobData(id)).toBeUndefined();
    // Later sweeps (leases, outbox) leave it as it is.
    await sweepAt(6 * 3600);
    expect(await jobData(id)).toBeUndefined();
    expect(await message(id)).toEqual(row);
  });

  it('fails an offered message never acknowledged ("did not acknowledge") at the same moment, and gives it to no other device', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    await sweepAt(3600 + 299);
    expect((await message(id)).state).toBe('assigned');
    const result = await sweepAt(3600 + 301);

    expect(result.unacknowledgedFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments]).toEqual(['failed', device.id, 1]);
    expect(row.error).toContain('did not acknowledge');
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'failed']);
  });

  it('counts from the time to live when that comes first (validUntil = the earlier of the two)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const config = dispatcherConfig({ MESSAGE_TTL_SECONDS: '600', DEVICE_CLOCK_SKEW_SECONDS: '60' });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    await sweepAt(600 + 59, config);
    expect((await message(id)).state).toBe('assigned');
    await sweepAt(600 + 61, config);
    expect((await message(id)).state).toBe('failed');
  });

  it('leaves a message the device reported sent alone', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);
    const now = new Date();
    await applyReports(api.sql, { status: 'sent', reports: [{ id, deviceId: device.id, at: now, error: null }], now });

    await sweepAt(3 * 86_400);

    expect((await message(id)).state).toBe('sent');
  });
});

describe('waking a device again', () => {
  it('wakes a device whose offers wait unacknowledged for more than 30 s, at most once a minute', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    const subscriber = createSubscriberConnection(api.app.redis);
    const woken: string[] = [];
    subscriber.on('message', (_channel: string, deviceId: string) => woken.push(deviceId));
    await subscriber.subscribe(wakeupChannel(api.config.QUEUE_PREFIX));
    try {
      await sweepAt(20);
      const first = await sweepAt(31);
      const second = await sweepAt(40);
      expect(first.devicesWokenAgain).toBeGreaterThanOrEqual(1);
      await vi.waitFor(() => expect(woken.filter((d) => d === device.id)).toHaveLength(1));
      expect(second.devicesWokenAgain).toBe(0);
    } finally {
      subscriber.disconnect();
    }
  });
});

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
