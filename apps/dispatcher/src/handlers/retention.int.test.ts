import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatcherConfigSchema, loadConfig, type DispatcherConfig } from '@smsgw/config';
import { newId } from '@smsgw/core';
import { purgeMessages } from '@smsgw/db';
import { createTestUser, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';
import { applyRetention } from './retention.ts';

/** Retention (issue 15, item 2): what the sweep deletes, and what it must never touch. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const DAY = 86_400_000;
type State = 'pending' | 'assigned' | 'sending' | 'sent' | 'delivered' | 'failed';

function config(env: Record<string, string>): DispatcherConfig {
  return loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    ...env,
  });
}

/** A batch of messages of `userId`, each in `state`, last changed `ageDays` ago, with one history row each. */
async function batch(userId: string, messages: { state: State; ageDays: number }[]): Promise<{ batchId: string; ids: string[] }> {
  const batchId = newId();
  await api.db.batch.create({ data: { id: batchId, userId, recipientsCount: messages.length, createdAt: new Date(Date.now() - 40 * DAY) } });
  const ids: string[] = [];
  for (const { state, ageDays } of messages) {
    const id = newId();
    const at = new Date(Date.now() - ageDays * DAY);
    await api.db.message.create({
      data: {
        id,
        userId,
        batchId,
        to: uniquePhone(),
        body: 'kept or not',
        segments: 1,
        encoding: 'GSM_7',
        state,
        createdAt: new Date(Date.now() - 40 * DAY),
        updatedAt: at,
      },
    });
    await api.db.messageEvent.create({ data: { messageId: id, state, at } });
    ids.push(id);
  }
  return { batchId, ids };
}

async function listTotal(apiKey: string): Promise<number> {
  const res = await api.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': apiKey } });
  expect(res.statusCode).toBe(200);
  return res.json().total as number;
}

describe('retention', () => {
  it('deletes SMS Gate tokens once expired, keeping live and revoked-but-unexpired ones', async () => {
    const { userId } = await createTestUser(api.db);
    const apiKeyId = (await api.db.apiKey.findFirstOrThrow({ where: { userId } })).id;
    const token = (expiresAt: Date, revokedAt: Date | null = null) =>
      api.db.scopedToken.create({ data: { id: newId(), userId, apiKeyId, use: 'access', scopes: ['all:any'], expiresAt, revokedAt } });
    await token(new Date(Date.now() - 1000));
    const live = await token(new Date(Date.now() + DAY));
    const revoked = await token(new Date(Date.now() + DAY), new Date());

    const result = await applyRetention(api.sql, config({}), new Date());

    expect(result.scopedTokensPurged).toBeGreaterThanOrEqual(1);
    expect((await api.db.scopedToken.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { id: true } })).map((t) => t.id)).toEqual(
      [live.id, revoked.id].sort(),
    );
  });

  it('deletes only final messages older than MESSAGE_RETENTION_DAYS, with their history and emptied batches; quota and counts stay right', async () => {
    const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
    await api.db.quotaUsage.create({ data: { userId, period: new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)), used: 9 } });
    const emptied = await batch(userId, [
      { state: 'delivered', ageDays: 31 },
      { state: 'failed', ageDays: 45 },
    ]);
    const mixed = await batch(userId, [
      { state: 'delivered', ageDays: 31 },
      { state: 'sent', ageDays: 60 },
    ]);
    const young = await batch(userId, [
      { state: 'delivered', ageDays: 29 },
      { state: 'failed', ageDays: 1 },
    ]);
    const moving = await batch(
      userId,
      (['pending', 'assigned', 'sending'] as const).map((state) => ({ state, ageDays: 90 })),
    );
    expect(await listTotal(apiKey)).toBe(9);

    const result = await applyRetention(api.sql, config({ MESSAGE_RETENTION_DAYS: '30' }), new Date());

    expect(result.messagesPurged).toBe(3);
    const left = await api.db.message.findMany({ where: { userId }, select: { id: true } });
    expect(new Set(left.map((m) => m.id))).toEqual(new Set([mixed.ids[1], ...young.ids, ...moving.ids]));
    const history = await api.db.messageEvent.findMany({ where: { messageId: { in: [...emptied.ids, mixed.ids[0]!] } } });
    expect(history).toEqual([]);
    expect(await api.db.messageEvent.count({ where: { messageId: { in: left.map((m) => m.id) } } })).toBe(6);
    const batches = await api.db.batch.findMany({ where: { userId }, select: { id: true } });
    expect(new Set(batches.map((b) => b.id))).toEqual(new Set([mixed.batchId, young.batchId, moving.batchId]));
    expect(await listTotal(apiKey)).toBe(6);
    expect((await api.db.quotaUsage.findFirstOrThrow({ where: { userId } })).used).toBe(9);

    // A second sweep finds nothing more; 0 days keeps everything.
    expect((await applyRetention(api.sql, config({ MESSAGE_RETENTION_DAYS: '30' }), new Date())).messagesPurged).toBe(0);
    expect((await applyRetention(api.sql, config({ MESSAGE_RETENTION_DAYS: '0' }), new Date(Date.now() + 3650 * DAY))).messagesPurged).toBe(0);
    expect(await api.db.message.count({ where: { userId } })).toBe(6);
  });

  it("deletes a send's callback (Kannel's dlr-url) with the last of its messages, not before", async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const callback = await api.db.messageCallback.create({
      data: { id: newId(), userId, url: 'http://dlr.example/', format: 'kannel', events: ['delivered'] },
    });
    const message = (ageDays: number) =>
      api.db.message.create({
        data: {
          id: newId(),
          userId,
          callbackId: callback.id,
          to: uniquePhone(),
          body: 'dlr',
          segments: 1,
          encoding: 'GSM_7',
          state: 'delivered',
          createdAt: new Date(Date.now() - 40 * DAY),
          updatedAt: new Date(Date.now() - ageDays * DAY),
        },
      });
    await message(35);
    const young = await message(5);
    const sweep = () => applyRetention(api.sql, config({ MESSAGE_RETENTION_DAYS: '30' }), new Date());

    await sweep();
    expect(await api.db.messageCallback.count({ where: { id: callback.id } })).toBe(1);
    await api.db.message.update({ where: { id: young.id }, data: { updatedAt: new Date(Date.now() - 31 * DAY) } });
    await sweep();
    expect(await api.db.message.count({ where: { userId } })).toBe(0);
    expect(await api.db.messageCallback.count({ where: { id: callback.id } })).toBe(0);
  });

  it('deletes a page at a time: no statement takes more than its limit', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const batchId = newId();
    await api.db.batch.create({ data: { id: batchId, userId, recipientsCount: 2500 } });
    await api.sql.query(
      `INSERT INTO messages (id, user_id, batch_id, to_number, body, segments, encoding, state, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, '+1555' || lpad(n::text, 7, '0'), 'bulk', 1, 'GSM-7', 'delivered', now() - interval '100 days', now() - interval '100 days'
         FROM generate_series(1, 2500) n`,
      [userId, batchId],
    );
    const before = new Date(Date.now() - 30 * DAY);
    const pages = [];
    for (let i = 0; i < 4; i++) pages.push(await purgeMessages(api.sql, { finishedBefore: before, limit: 1000 }));
    expect(pages).toEqual([1000, 1000, 500, 0]);
    expect(await api.db.batch.count({ where: { id: batchId } })).toBe(0);
  });

  it('deletes incoming SMS after RECEIVED_SMS_RETENTION_DAYS and history rows after MESSAGE_EVENT_RETENTION_DAYS, keeping their messages', async () => {
    const { userId, devices } = await createTestUser(api.db, { devices: 1 });
    const received = (ageDays: number) =>
      api.db.receivedMessage.create({
        data: {
          id: newId(),
          userId,
          deviceId: devices[0]!.id,
          from: uniquePhone(),
          body: 'hi',
          receivedAt: new Date(),
          createdAt: new Date(Date.now() - ageDays * DAY),
        },
      });
    const old = await received(8);
    const recent = await received(6);
    const { ids } = await batch(userId, [{ state: 'sent', ageDays: 20 }]);
    await api.db.messageEvent.create({ data: { messageId: ids[0]!, state: 'sent', at: new Date() } });

    const result = await applyRetention(api.sql, config({ RECEIVED_SMS_RETENTION_DAYS: '7', MESSAGE_EVENT_RETENTION_DAYS: '10' }), new Date());

    expect(result.receivedPurged).toBeGreaterThanOrEqual(1);
    expect((await api.db.receivedMessage.findMany({ where: { userId }, select: { id: true } })).map((r) => r.id)).toEqual([recent.id]);
    expect(old.id).not.toBe(recent.id);
    expect(result.messageEventsPurged).toBeGreaterThanOrEqual(1);
    expect((await api.db.messageEvent.findMany({ where: { messageId: ids[0]! } })).map((e) => e.at.getTime() > Date.now() - DAY)).toEqual([true]);
    expect(await api.db.message.count({ where: { id: ids[0]! } })).toBe(1);
  });
});
