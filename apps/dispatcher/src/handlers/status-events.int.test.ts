import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { DispatcherConfigSchema, loadConfig } from '@smsgw/config';
import { parseUserEventBatch, userEventsChannel, type UserEventBatch } from '@smsgw/queue';
import { createTestUser, send, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';
import { assignDevices } from '@smsgw/assign';
import { applyDeviceReports } from './apply-reports.ts';
import { announceTransitions } from '@smsgw/db/sql';
import { announceDeps, type AnnounceResources } from './announce-deps.ts';

/** Announces moved messages as the report and sweep handlers do after their commits. */
const publishStatus = (resources: AnnounceResources, moved: string[]) => announceTransitions(announceDeps(resources), { moved });

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

/** Listens to the users' channels as an API process holding a stream of theirs does. */
async function listenTo(...userIds: string[]): Promise<void> {
  await subscriber.subscribe(...userIds.map((id) => userEventsChannel(api.config.QUEUE_PREFIX, id)));
}
afterAll(async () => {
  subscriber?.disconnect();
  await api?.close();
});

function deps() {
  const config = loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
  });
  const resources = { sql: api.sql, redis: api.app.redis, webhooksQueue: api.app.webhooksQueue, config, log: pino({ level: 'silent' }) };
  return { ...resources, announce: announceDeps(resources) };
}

/** Waits for the `count` batches already on their way, then forgets them. */
async function drain(count: number): Promise<void> {
  await vi.waitFor(() => expect(batches.length).toBeGreaterThanOrEqual(count));
  batches.length = 0;
}

describe('message status events', () => {
  it('publishes one message per user and batch of assignments, never one per message', async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    await listenTo(alice.userId, bob.userId);
    const ids: string[] = [];
    for (const user of [alice, bob]) {
      const res = await send(api.app, user.apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone()], body: 'hi' });
      ids.push(...(res.json().message_ids as string[]));
    }
    await drain(2); // the sends' own `queued` events

    expect(await assignDevices(deps(), ids)).toEqual(ids.map(() => 'assigned'));
    await vi.waitFor(() => expect(batches).toHaveLength(2));
    const byUser = new Map(batches.map((b) => [b.user_id, b.events]));
    for (const [user, own] of [
      [alice, ids.slice(0, 3)],
      [bob, ids.slice(3)],
    ] as const) {
      const events = byUser.get(user.userId)!;
      expect(events.map((e) => e.data.id).sort()).toEqual([...own].sort());
      expect(events.every((e) => e.type === 'message.status' && e.data.status === 'queued' && e.data.state === 'assigned')).toBe(true);
    }
  });

  it('publishes the reports a device made, with the state they left', async () => {
    const user = await createTestUser(api.db);
    await listenTo(user.userId);
    const res = await send(api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' });
    const [id] = res.json().message_ids as string[];
    await assignDevices(deps(), [id!]);
    await api.sql.query('UPDATE messages SET offered_at = now() WHERE id = $1', [id]);
    const { applied } = await applyDeviceReports(api.sql, [
      { deviceId: user.deviceId!, receivedAt: new Date().toISOString(), reports: [{ id: id!, status: 'delivered' }] },
    ]);
    expect(applied.map((a) => a.status)).toEqual(['delivered']);
    await publishStatus(
      deps(),
      applied.map((a) => a.id),
    );
    await vi.waitFor(() => expect(batches.flatMap((b) => b.events).some((e) => e.data.id === id && e.data.status === 'delivered')).toBe(true));
    const delivered = batches.flatMap((b) => b.events).find((e) => e.data.status === 'delivered')!;
    expect(delivered.data).toEqual(expect.objectContaining({ id, status: 'delivered', state: 'delivered', error: null, device_id: user.deviceId }));
  });

  it('publishes nothing for no change, and only logs when Redis refuses', async () => {
    const warn = vi.fn();
    const redis = deps().redis;
    const broken = {
      ...deps(),
      redis: { pubsub: redis.pubsub.bind(redis), pipeline: () => ({ publish: () => undefined, exec: () => Promise.reject(new Error('Redis away')) }) } as never,
      log: { warn } as never,
    };
    await publishStatus(deps(), []);
    const user = await createTestUser(api.db);
    await listenTo(user.userId);
    const res = await send(api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' });
    await expect(publishStatus(broken, res.json().message_ids as string[])).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledOnce();
  });

  it('reads nothing and publishes nothing for users with no stream open, and only their events for the others', async () => {
    const quiet = await createTestUser(api.db);
    const heard = await createTestUser(api.db);
    await listenTo(heard.userId);
    const ids: string[] = [];
    for (const user of [quiet, heard])
      ids.push(...((await send(api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' })).json().message_ids as string[]));
    await drain(1);
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

    await subscriber.unsubscribe(); // every channel of the earlier tests too: no stream open at all
    await publishStatus(counting, ids);
    expect(queries).toHaveLength(0);

    await listenTo(heard.userId);
    await publishStatus(counting, ids);
    expect(queries).toHaveLength(1);
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    expect(batches[0]!.user_id).toBe(heard.userId);
    expect(batches[0]!.events.map((e) => e.data.id)).toEqual([ids[1]]);
  });
});
