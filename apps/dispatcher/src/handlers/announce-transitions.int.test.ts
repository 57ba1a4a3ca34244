import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateWebhookSecret, newId, toMessageRecord } from '@smsgw/core';
import { announceTransitions, failMessages, messageFromSnapshot, type Transitioned } from '@smsgw/db/sql';
import { parseUserEventBatch, userEventsChannel, type UserEventBatch } from '@smsgw/queue';
import { createTestUser, send, startTestApi, uniquePhone, type TestApi, type TestUser } from '@smsgw/api/testing';
import { announceDeps } from './announce-deps.ts';

/** The one after-commit step (packages/db's announceTransitions) on a real queue, Redis and Postgres, as the dispatcher binds it. */
let api: TestApi;
let subscriber: Redis;
const batches: UserEventBatch[] = [];

beforeAll(async () => {
  api = await startTestApi();
  subscriber = new Redis(api.config.REDIS_URL);
  subscriber.on('message', (_channel: string, text: string) => {
    const batch = parseUserEventBatch(text);
    if (batch) batches.push(batch);
  });
});
afterAll(async () => {
  subscriber?.disconnect();
  await api?.close();
});

const log = pino({ level: 'silent' });
const deps = () => ({ sql: api.sql, redis: api.app.redis, webhooksQueue: api.app.webhooksQueue, config: { QUEUE_PREFIX: api.config.QUEUE_PREFIX }, log });

async function listenTo(userId: string): Promise<void> {
  await subscriber.subscribe(userEventsChannel(api.config.QUEUE_PREFIX, userId));
}

/** Two messages of a user with a `message.failed` endpoint, failed by one committed statement. */
async function failedWithWebhook(user: TestUser): Promise<Transitioned> {
  await api.db.webhook.create({
    data: { id: newId(), userId: user.userId, url: 'https://hooks.example.com/smsgw', events: ['message.failed'], secret: generateWebhookSecret() },
  });
  const ids = (await send(api.app, user.apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'hi' })).json().message_ids as string[];
  const done = await failMessages(api.sql, { ids, now: new Date(), from: ['pending'], error: 'Expired' });
  expect(done.moved.sort()).toEqual([...ids].sort());
  expect(done.deliveries).toHaveLength(2);
  return done;
}

const jobsOf = (done: Transitioned) => Promise.all(done.deliveries.map((d) => api.app.webhooksQueue.getJob(d.id)));

describe('announceTransitions', () => {
  it("enqueues the commit's webhook deliveries and publishes its moved messages' live events, which say what the delivered record says", async () => {
    const user = await createTestUser(api.db);
    await listenTo(user.userId);
    const done = await failedWithWebhook(user);
    await vi.waitFor(() => expect(batches.length).toBeGreaterThanOrEqual(1)); // the send's own `queued` events
    batches.length = 0;

    await announceTransitions(announceDeps(deps()), done);

    expect((await jobsOf(done)).map((job) => job?.data)).toEqual(done.deliveries.map((d) => ({ deliveryId: d.id, webhookId: d.webhookId })));
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    const events = batches[0]!.events;
    expect(batches[0]!.user_id).toBe(user.userId);
    expect(events.map((e) => e.data.id).sort()).toEqual([...done.moved].sort());
    const rows = await api.db.webhookDelivery.findMany({ where: { id: { in: done.deliveries.map((d) => d.id) } } });
    for (const row of rows) {
      const record = toMessageRecord(messageFromSnapshot(row.data as Record<string, unknown>));
      const event = events.find((e) => e.data.id === record.id)!;
      expect(event.type).toBe('message.status');
      const { failed_at: failedAt, ...shared } = event.data;
      expect(shared).toEqual({
        id: record.id,
        status: 'failed',
        state: 'failed',
        batch_id: record.batch_id,
        device_id: record.device_id,
        error: 'Expired',
        created_at: record.created_at,
        updated_at: record.updated_at,
        sent_at: null,
        delivered_at: null,
      });
      expect(failedAt).toBe(record.updated_at);
    }
  });

  it('reads no message when no user has a stream open, and still enqueues the deliveries', async () => {
    const user = await createTestUser(api.db);
    const done = await failedWithWebhook(user);
    await subscriber.unsubscribe();
    const queries: unknown[][] = [];
    const counting = {
      ...deps(),
      sql: {
        query: (...args: unknown[]) => {
          queries.push(args);
          return (api.sql.query as (...a: unknown[]) => unknown)(...args);
        },
      } as never,
    };

    await announceTransitions(announceDeps(counting), done);

    expect(queries).toHaveLength(0);
    expect((await jobsOf(done)).every((job) => job !== undefined)).toBe(true);
  });

  it('only reports a refused enqueue or publish: the deliveries stay pending in Postgres, the outbox of the sweep', async () => {
    const user = await createTestUser(api.db);
    await listenTo(user.userId);
    const done = await failedWithWebhook(user);
    const warn = vi.fn();
    const redis = api.app.redis;
    const broken = {
      ...deps(),
      webhooksQueue: { addBulk: () => Promise.reject(new Error('Redis away')) } as never,
      redis: { pubsub: redis.pubsub.bind(redis), pipeline: () => ({ publish: () => undefined, exec: () => Promise.reject(new Error('Redis away')) }) } as never,
      log: { warn } as never,
    };

    await expect(announceTransitions(announceDeps(broken), done)).resolves.toBeUndefined();

    expect(warn.mock.calls.map(([, message]) => message).sort()).toEqual(['publishing live events failed', 'webhook enqueue failed: left to the outbox sweep']);
    expect((await jobsOf(done)).every((job) => job === undefined)).toBe(true);
    const rows = await api.db.webhookDelivery.findMany({ where: { id: { in: done.deliveries.map((d) => d.id) } } });
    expect(rows.map((r) => [r.state, r.nextAttemptAt !== null])).toEqual(rows.map(() => ['pending', true]));
  });

  it("enqueues webhook deliveries alone with no Redis at hand (a device's health)", async () => {
    const user = await createTestUser(api.db);
    const done = await failedWithWebhook(user);

    await announceTransitions(announceDeps({ webhooksQueue: api.app.webhooksQueue, log }), { deliveries: done.deliveries });

    expect((await jobsOf(done)).every((job) => job !== undefined)).toBe(true);
  });

  it('publishes the events known without a read as they are, and nothing when there is nothing to announce', async () => {
    const user = await createTestUser(api.db);
    await listenTo(user.userId);
    batches.length = 0;
    const sql = { query: () => Promise.reject(new Error('no read expected')) } as never;
    await announceTransitions(announceDeps({ ...deps(), sql }), {});
    const data = { id: newId(), name: 'any' };

    await announceTransitions(announceDeps({ ...deps(), sql }), { events: [{ userId: user.userId, event: { type: 'sms.received', data } as never }] });

    await vi.waitFor(() => expect(batches).toHaveLength(1));
    expect(batches[0]!.events).toEqual([{ type: 'sms.received', data }]);
  });
});
