import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDevice } from '@smsgw/db';
import { call, createTestUser, send, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

function newKey(): string {
  return `key-${randomBytes(12).toString('hex')}`;
}

const withKey = (key: string) => ({ 'idempotency-key': key });

describe('Idempotency-Key on POST /api/sms/send', () => {
  it('replays the first response for the same key and body, with Idempotency-Replayed: true, and creates nothing new', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const payload = { recipients: [phone(), phone()], body: 'once only' };

    const first = await send(api.app, apiKey, payload, withKey(key));
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    const after = await sendFootprint(api, user.id);
    expect(after).toMatchObject({ messages: 2, batches: 1, quotaUsed: 2 });

    const again = await send(api.app, apiKey, payload, withKey(key));

    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await sendFootprint(api, user.id)).toEqual(after);
  });

  it('replays a one-recipient response without batch_id', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const payload = { recipients: [phone()], body: 'single' };

    const first = await send(api.app, apiKey, payload, withKey(key));
    const again = await send(api.app, apiKey, payload, withKey(key));

    expect(first.statusCode).toBe(200);
    expect({ status: again.statusCode, replayed: again.headers['idempotency-replayed'] }).toEqual({ status: 200, replayed: 'true' });
    expect(again.json()).toEqual({ message_ids: first.json().message_ids, recipients_count: 1, status: 'accepted' });
    expect('batch_id' in again.json()).toBe(false);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(1);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, and creates nothing', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const first = await send(api.app, apiKey, { recipients: [phone()], body: 'first' }, withKey(key));
    expect(first.statusCode).toBe(200);
    const before = await sendFootprint(api, user.id);

    const other = await send(api.app, apiKey, { recipients: [phone()], body: 'second' }, withKey(key));

    expect({ status: other.statusCode, body: other.json() }).toEqual({
      status: 422,
      body: { error: 'idempotency_key_reused', message: expect.any(String) },
    });
    expect(await sendFootprint(api, user.id)).toEqual(before);
  });

  it('answers 400 invalid_request naming the header for a key of 256 characters, and accepts 255', async () => {
    const { apiKey, user } = await createTestUser(api.db);

    const tooLong = await send(api.app, apiKey, { recipients: [phone()], body: 'hi' }, withKey('k'.repeat(256)));

    expect({ status: tooLong.statusCode, body: tooLong.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringMatching(/Idempotency-Key/i) },
    });
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(0);

    const longest = await send(api.app, apiKey, { recipients: [phone()], body: 'hi' }, withKey('k'.repeat(255)));
    expect(longest.statusCode).toBe(200);
  });

  it('answers 400 invalid_request for an empty key', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'hi' }, withKey(''));
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringMatching(/Idempotency-Key/i) },
    });
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(0);
  });

  it('does not burn the key on a refusal: after 503 no_devices and a device connecting, the same key and body succeed', async () => {
    const { apiKey, user } = await createTestUser(api.db, { devices: 0 });
    const key = newKey();
    const payload = { recipients: [phone()], body: 'retry me' };

    const refused = await send(api.app, apiKey, payload, withKey(key));
    expect(refused.statusCode).toBe(503);
    const { token } = await createDevice(api.db, { userId: user.id, name: 'late phone' });
    const heartbeat = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${token}` } });
    expect(heartbeat.statusCode).toBe(200);

    const retried = await send(api.app, apiKey, payload, withKey(key));

    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBeUndefined();
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(1);
    const replay = await send(api.app, apiKey, payload, withKey(key));
    expect({ status: replay.statusCode, replayed: replay.headers['idempotency-replayed'], body: replay.json() }).toEqual({
      status: 200,
      replayed: 'true',
      body: retried.json(),
    });
  });

  it('does not burn the key on 402: after the quota is raised, the same key succeeds', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 0 });
    const key = newKey();
    const payload = { recipients: [phone()], body: 'over quota' };

    const refused = await send(api.app, apiKey, payload, withKey(key));
    expect(refused.statusCode).toBe(402);
    await api.db.user.update({ where: { id: user.id }, data: { monthlyQuota: 10 } });
    // As an operator's change: it reaches the API's credential cache within a second.
    await vi.waitFor(async () => expect((await call(api.app, apiKey, 'GET', '/api/v1/quota')).json().limit).toBe(10), { timeout: 1000, interval: 10 });

    const retried = await send(api.app, apiKey, payload, withKey(key));

    expect(retried.statusCode).toBe(200);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(1);
  });

  it('lets a corrected request reuse the key of one refused for a bad number or a bad shape', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();

    const badNumber = await send(api.app, apiKey, { recipients: ['5551234'], body: 'hi' }, withKey(key));
    const badShape = await send(api.app, apiKey, { recipients: [phone()], body: '' }, withKey(key));
    const corrected = await send(api.app, apiKey, { recipients: [phone()], body: 'hi' }, withKey(key));

    expect([badNumber.statusCode, badShape.statusCode, corrected.statusCode]).toEqual([400, 400, 200]);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(1);
  });

  it("keeps keys per user: another user's request with the same key is independent", async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const key = newKey();

    const fromAlice = await send(api.app, alice.apiKey, { recipients: [phone()], body: 'alice' }, withKey(key));
    const fromBob = await send(api.app, bob.apiKey, { recipients: [phone()], body: 'bob' }, withKey(key));
    const sameAsAlice = await send(api.app, bob.apiKey, { recipients: [phone()], body: 'alice' }, withKey(newKey()));

    expect([fromAlice.statusCode, fromBob.statusCode, sameAsAlice.statusCode]).toEqual([200, 200, 200]);
    expect(fromBob.headers['idempotency-replayed']).toBeUndefined();
    expect(fromBob.json().message_ids).not.toEqual(fromAlice.json().message_ids);
    expect(await api.db.message.count({ where: { userId: alice.user.id } })).toBe(1);
    expect(await api.db.message.count({ where: { userId: bob.user.id } })).toBe(2);
  });

  it('takes a retry at once after a request that died: a key without a response holds nothing', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const payload = { recipients: [phone()], body: 'died' };
    // What a request that died mid-flight under the earlier design left: a claim without a response.
    await api.db.$executeRaw`
      INSERT INTO idempotency_keys (user_id, key, request_hash, created_at) VALUES (${user.id}::uuid, ${key}, '\\x00'::bytea, now())`;

    const res = await send(api.app, apiKey, payload, withKey(key));

    expect(res.statusCode).toBe(200);
    expect(res.headers['idempotency-replayed']).toBeUndefined();
    const again = await send(api.app, apiKey, payload, withKey(key));
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json().message_ids).toEqual(res.json().message_ids);
    expect(await sendFootprint(api, user.id)).toMatchObject({ messages: 1, quotaUsed: 1 });
  });

  it('leaves no trace of a key whose transaction rolled back: a retry with the key is taken anew', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 1 });
    const key = newKey();
    const refused = await send(api.app, apiKey, { recipients: [phone(), phone()], body: 'over quota' }, withKey(key));
    expect(refused.json().error).toBe('quota_exceeded');
    expect(await api.db.idempotencyKey.count({ where: { userId: user.id } })).toBe(0);
    const fixed = await send(api.app, apiKey, { recipients: [phone()], body: 'within quota' }, withKey(key));
    expect(fixed.statusCode).toBe(200);
  });

  it('never gives two sets of message ids for concurrent identical requests with one key: one sends, the others replay it', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const payload = { recipients: [phone(), phone()], body: 'concurrent' };

    const responses = await Promise.all(Array.from({ length: 8 }, () => send(api.app, apiKey, payload, withKey(key))));

    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const fresh = responses.filter((r) => r.headers['idempotency-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    const ids = new Set(responses.map((r) => JSON.stringify(r.json().message_ids)));
    expect(ids.size).toBe(1);
    expect(await sendFootprint(api, user.id)).toMatchObject({ messages: 2, batches: 1, quotaUsed: 2 });
  });

  it('treats a key older than 24 hours as new: the same key and body send again', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const key = newKey();
    const payload = { recipients: [phone()], body: 'daily' };
    const first = await send(api.app, apiKey, payload, withKey(key));
    expect(first.statusCode).toBe(200);
    await api.db.idempotencyKey.update({
      where: { userId_key: { userId: user.id, key } },
      data: { createdAt: new Date(Date.now() - 25 * 3600 * 1000) },
    });

    const later = await send(api.app, apiKey, payload, withKey(key));

    expect(later.statusCode).toBe(200);
    expect(later.headers['idempotency-replayed']).toBeUndefined();
    expect(later.json().message_ids).not.toEqual(first.json().message_ids);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(2);
  });

  it('sends twice without a key: the header is what makes a retry safe', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const payload = { recipients: [phone()], body: 'no key' };
    const [a, b] = [await send(api.app, apiKey, payload), await send(api.app, apiKey, payload)];
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(2);
  });
});
