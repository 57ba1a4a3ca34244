import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { DispatcherConfigSchema, loadConfig } from '@smsgw/config';
import { EXPIRED_BEFORE_SENT, assignMessages, offerMessages } from '@smsgw/db';
import { enqueueDispatch } from '@smsgw/queue';
import { createTestUser, send, uniquePhone as phone, type TestUser } from '@smsgw/api/testing';
import { sweep } from './handlers/sweep.ts';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';
import { createWebhook } from './testing/webhook-fixtures.ts';
import { EndpointSlots } from './webhooks/endpoint-slots.ts';

/** No stale sends (issue 18, item 5): MAX_QUEUE_SECONDS, counted from creation or send_at; a message's own validity replaces it. */
const harness = useDispatcherTestApi();

async function sendOne(user: TestUser, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await send(harness.api.app, user.apiKey, { recipients: [phone()], body: 'stale?', ...extra });
  expect(res.statusCode).toBe(200);
  const [id] = res.json().message_ids as string[];
  return id!;
}

function message(id: string) {
  return harness.api.db.message.findUniqueOrThrow({ where: { id } });
}

/** Moves the message's creation (and send_at, if given) into the past, as if it had waited that long. */
async function age(id: string, seconds: number, sendAtSecondsAgo?: number): Promise<void> {
  await harness.api.db.message.update({
    where: { id },
    data: {
      createdAt: new Date(Date.now() - seconds * 1000),
      ...(sendAtSecondsAgo !== undefined && { sendAt: new Date(Date.now() - sendAtSecondsAgo * 1000) }),
    },
  });
}

/** The user's only device stops being available (as if it went away). */
async function deviceGone(user: TestUser): Promise<void> {
  await harness.api.db.device.updateMany({ where: { userId: user.userId }, data: { lastSeenAt: new Date(0) } });
}

function sweepNow(maxQueueSeconds: number) {
  const { api } = harness;
  const config = loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
    MAX_QUEUE_SECONDS: String(maxQueueSeconds),
  });
  const slots = new EndpointSlots(api.app.redis, api.config.QUEUE_PREFIX, 8, 20_000);
  return sweep({
    sql: api.sql,
    redis: api.app.redis,
    dispatchQueue: api.queue,
    webhooksQueue: api.app.webhooksQueue,
    slots,
    config,
    log: pino({ level: 'silent' }),
  });
}

describe('MAX_QUEUE_SECONDS', () => {
  it('fails a message that waited with no device at all, "expired before it could be sent", with its message.failed event', async () => {
    const user = await createTestUser(harness.api.db);
    await createWebhook(harness.api, user.userId, 'https://example.org/hooks', { events: ['message.failed'] });
    const id = await sendOne(user);
    await deviceGone(user);
    await harness.start({ MAX_QUEUE_SECONDS: '2', SWEEP_INTERVAL_SECONDS: '1' });

    await vi.waitFor(async () => expect(await message(id)).toMatchObject({ state: 'failed', error: EXPIRED_BEFORE_SENT }), { timeout: 15_000, interval: 200 });
    const row = await message(id);
    expect(row.failedAt!.getTime() - row.createdAt.getTime()).toBeGreaterThanOrEqual(2000);
    const deliveries = await harness.api.db.webhookDelivery.findMany({ where: { userId: user.userId, messageId: id } });
    expect(deliveries.map((d) => d.type)).toEqual(['message.failed']);
  });

  it('fails a message past it when its dispatch job runs, and the assignment statement and the first offer refuse it too', async () => {
    const user = await createTestUser(harness.api.db);
    const viaJob = await sendOne(user);
    await harness.api.queue.remove(viaJob);
    await age(viaJob, 60);
    const direct = await sendOne(user);
    await harness.api.queue.remove(direct);
    await age(direct, 60);

    expect(await assignMessages(harness.api.sql, { assignments: [{ id: direct, deviceId: user.deviceId! }], now: new Date(), maxQueueSeconds: 30 })).toEqual(
      [],
    );
    // Assigned before the deadline, never offered: the first offer after it hands nothing.
    expect(await assignMessages(harness.api.sql, { assignments: [{ id: direct, deviceId: user.deviceId! }], now: new Date() })).toHaveLength(1);
    expect(await offerMessages(harness.api.sql, { deviceId: user.deviceId!, limit: 10, order: 'oldest', now: new Date(), maxQueueSeconds: 30 })).toEqual([]);

    await harness.start({ MAX_QUEUE_SECONDS: '30' });
    await enqueueDispatch(harness.api.queue, [viaJob]);
    await vi.waitFor(async () => expect(await message(viaJob)).toMatchObject({ state: 'failed', error: EXPIRED_BEFORE_SENT }), {
      timeout: 15_000,
      interval: 200,
    });
    expect((await message(viaJob)).deviceId).toBeNull();
  });

  it("counts from send_at for a scheduled message, and a message's own valid_until or ttl_seconds replaces it", async () => {
    const user = await createTestUser(harness.api.db);
    const plain = await sendOne(user);
    const withTtl = await sendOne(user, { ttl_seconds: 3600 });
    const scheduled = await sendOne(user, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
    for (const id of [plain, withTtl, scheduled]) await harness.api.queue.remove(id);
    await age(plain, 120);
    await age(withTtl, 120);
    await age(scheduled, 7200, 30);

    const result = await sweepNow(60);

    expect(result.expired).toBeGreaterThanOrEqual(1);
    expect(await message(plain)).toMatchObject({ state: 'failed', error: EXPIRED_BEFORE_SENT });
    expect((await message(withTtl)).state).toBe('pending');
    expect((await message(scheduled)).state).toBe('pending');

    await age(scheduled, 7200, 90);
    await sweepNow(60);
    expect(await message(scheduled)).toMatchObject({ state: 'failed', error: EXPIRED_BEFORE_SENT });
  });

  it('leaves a message a device already holds (offered) alone', async () => {
    const user = await createTestUser(harness.api.db);
    const id = await sendOne(user);
    await harness.api.queue.remove(id);
    expect(await assignMessages(harness.api.sql, { assignments: [{ id, deviceId: user.deviceId! }], now: new Date() })).toHaveLength(1);
    expect(await offerMessages(harness.api.sql, { deviceId: user.deviceId!, limit: 10, order: 'oldest', now: new Date() })).toHaveLength(1);
    await age(id, 120);
    await sweepNow(60);
    expect((await message(id)).state).toBe('assigned');
  });
});
