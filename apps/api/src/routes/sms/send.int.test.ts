import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countJobs, createTestUser, send, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

// MAX_RECIPIENTS is small so that too_many_recipients can be reached with a handful of numbers.
const MAX_RECIPIENTS = 3;

/** POST /api/sms/send: what it accepts and stores (its refusals: send-refusals.int.test.ts). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MAX_RECIPIENTS: String(MAX_RECIPIENTS) });
});
afterAll(async () => {
  await api?.close();
});

async function userWithDevice(options: { monthlyQuota?: number | null; devices?: number } = {}) {
  const t = await createTestUser(api.db, options);
  return { ...t, userId: t.user.id };
}

describe('POST /api/sms/send accepts', () => {
  it('stores one message per distinct recipient, enqueues one job each with the message id as jobId, and answers accepted', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const res = await send(api.app, apiKey, { recipients: ['+15550000001', '+15550000002', '+15550000001'], body: 'hello' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ recipients_count: 2, status: 'accepted' });
    expect(body.message_ids).toHaveLength(2);
    expect(body.batch_id).toEqual(expect.any(String));

    const rows = await api.db.message.findMany({ where: { userId: user.id }, orderBy: { to: 'asc' } });
    expect(rows.map((r) => [r.to, r.body, r.state, r.batchId])).toEqual([
      ['+15550000001', 'hello', 'pending', body.batch_id],
      ['+15550000002', 'hello', 'pending', body.batch_id],
    ]);
    for (const id of body.message_ids) {
      const job = await api.queue.getJob(id);
      expect(job?.data).toEqual({ messageId: id });
    }
  });

  it('answers exactly {message_ids, recipients_count, status, batch_id} and stores a batch row counting the recipients', async () => {
    const { apiKey, userId } = await userWithDevice();
    const recipients = [phone(), phone(), phone()];
    const jobsBefore = await countJobs(api.queue);

    const res = await send(api.app, apiKey, { recipients, body: 'batch of three' });

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['batch_id', 'message_ids', 'recipients_count', 'status']);
    expect(body).toEqual({ message_ids: expect.any(Array), recipients_count: 3, status: 'accepted', batch_id: expect.any(String) });
    expect(new Set(body.message_ids).size).toBe(3);

    const batches = await api.db.batch.findMany({ where: { userId } });
    expect(batches.map((b) => [b.id, b.recipientsCount])).toEqual([[body.batch_id, 3]]);
    const rows = await api.db.message.findMany({ where: { userId } });
    expect(rows.map((r) => r.id).sort()).toEqual([...body.message_ids].sort());
    expect(rows.map((r) => r.to).sort()).toEqual([...recipients].sort());
    expect(await countJobs(api.queue)).toBe(jobsBefore + 3);
  });

  it('omits batch_id (absent, not null) for one recipient, stores no batch, and enqueues one job with {messageId}', async () => {
    const { apiKey, userId } = await userWithDevice();
    const to = phone();

    const res = await send(api.app, apiKey, { recipients: [to], body: 'just one' });

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ message_ids: [expect.any(String)], recipients_count: 1, status: 'accepted' });
    expect('batch_id' in body).toBe(false);
    const [id] = body.message_ids;
    const rows = await api.db.message.findMany({ where: { userId } });
    expect(rows.map((r) => ({ id: r.id, to: r.to, batchId: r.batchId, state: r.state }))).toEqual([{ id, to, batchId: null, state: 'pending' }]);
    expect(await api.db.batch.count({ where: { userId } })).toBe(0);
    const job = await api.queue.getJob(id);
    expect({ jobId: job?.id, data: job?.data }).toEqual({ jobId: id, data: { messageId: id } });
  });

  it('de-duplicates exact E.164 strings: three copies of one number are one recipient and no batch', async () => {
    const { apiKey, userId } = await userWithDevice();
    const to = phone();

    const res = await send(api.app, apiKey, { recipients: [to, to, to], body: 'once' });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message_ids: [expect.any(String)], recipients_count: 1, status: 'accepted' });
    expect(await api.db.message.count({ where: { userId } })).toBe(1);
    expect(await api.db.batch.count({ where: { userId } })).toBe(0);
  });

  it('counts recipients after de-duplication against MAX_RECIPIENTS (4 entries, 3 distinct, limit 3, is accepted)', async () => {
    const { apiKey, userId } = await userWithDevice();
    const [a, b, c] = [phone(), phone(), phone()];

    const res = await send(api.app, apiKey, { recipients: [a, b, c, a], body: 'dedup first' });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ recipients_count: 3 });
    expect(await api.db.message.count({ where: { userId } })).toBe(3);
  });

  it('accepts the shortest and longest E.164 numbers (+ and 2 to 15 digits)', async () => {
    const { apiKey, userId } = await userWithDevice();
    const res = await send(api.app, apiKey, { recipients: ['+12', '+123456789012345'], body: 'edges' });
    expect(res.statusCode).toBe(200);
    const rows = await api.db.message.findMany({ where: { userId }, orderBy: { to: 'asc' } });
    expect(rows.map((r) => r.to)).toEqual(['+12', '+123456789012345']);
  });

  it('accepts an empty group_ids list', async () => {
    const { apiKey } = await userWithDevice();
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'no groups', group_ids: [] });
    expect(res.statusCode).toBe(200);
  });

  it('accepts a body of 1600 Unicode code points (1600 emoji, 3200 UTF-16 units) and stores it intact', async () => {
    const { apiKey, userId } = await userWithDevice();
    const text = '😀'.repeat(1600);

    const res = await send(api.app, apiKey, { recipients: [phone()], body: text });

    expect(res.statusCode).toBe(200);
    const [row] = await api.db.message.findMany({ where: { userId } });
    expect(row?.body).toBe(text);
    expect(row?.encoding).toBe('UCS_2');
  });

  it('accepts a GSM-7 body of exactly 1600 characters', async () => {
    const { apiKey } = await userWithDevice();
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'a'.repeat(1600) });
    expect(res.statusCode).toBe(200);
  });

  it.each([
    ['160 GSM-7 characters', 'a'.repeat(160), 'GSM-7', 1],
    ['161 GSM-7 characters', 'a'.repeat(161), 'GSM-7', 2],
    ['306 GSM-7 characters (2 x 153)', 'a'.repeat(306), 'GSM-7', 2],
    ['307 GSM-7 characters', 'a'.repeat(307), 'GSM-7', 3],
    ['70 UCS-2 characters', 'ж'.repeat(70), 'UCS-2', 1],
    ['71 UCS-2 characters', 'ж'.repeat(71), 'UCS-2', 2],
    ['GSM-7 text with one non-GSM character', `${'a'.repeat(69)}ж`, 'UCS-2', 1],
  ])('stores segments and encoding as carriers count them: %s', async (_name, text, encoding, segments) => {
    const { apiKey, userId } = await userWithDevice();

    const res = await send(api.app, apiKey, { recipients: [phone()], body: text });

    expect(res.statusCode).toBe(200);
    const [id] = res.json().message_ids;
    const row = await api.db.message.findFirstOrThrow({ where: { userId, id } });
    expect({ segments: row.segments, encoding: row.encoding }).toEqual({ segments, encoding: encoding === 'GSM-7' ? 'GSM_7' : 'UCS_2' });
    const record = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { 'x-api-key': apiKey } });
    expect(record.json()).toMatchObject({ id, segments, encoding, message: text });
  });

  it('stores a named device_id as the requested device of every message', async () => {
    const { apiKey, userId } = await userWithDevice({ devices: 2 });
    const devices = await api.db.device.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
    const named = devices[1]!.id;

    const res = await send(api.app, apiKey, { recipients: [phone(), phone()], body: 'pinned', device_id: named });

    expect(res.statusCode).toBe(200);
    const rows = await api.db.message.findMany({ where: { userId } });
    expect(rows.map((r) => r.requestedDeviceId)).toEqual([named, named]);
  });

  it('stores no requested device when device_id is omitted', async () => {
    const { apiKey, userId } = await userWithDevice();
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'round-robin' });
    expect(res.statusCode).toBe(200);
    const rows = await api.db.message.findMany({ where: { userId } });
    expect(rows.map((r) => r.requestedDeviceId)).toEqual([null]);
  });

  it('counts a device seen just inside DEVICE_AVAILABLE_SECONDS as available', async () => {
    const { apiKey, deviceId } = await userWithDevice();
    const seen = new Date(Date.now() - (api.config.DEVICE_AVAILABLE_SECONDS - 60) * 1000);
    await api.db.device.update({ where: { id: deviceId! }, data: { lastSeenAt: seen } });

    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'recently seen' });

    expect(res.statusCode).toBe(200);
  });

  it('accepts a JWT bearer token as an alternative to X-API-Key', async () => {
    const { apiKey, userId } = await userWithDevice();
    const token = await api.app.inject({ method: 'POST', url: '/api/v1/auth/token', headers: { 'x-api-key': apiKey } });
    expect(token.statusCode).toBe(200);
    const jwt = token.json().token as string;

    const res = await api.app.inject({
      method: 'POST',
      url: '/api/sms/send',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { recipients: [phone()], body: 'via jwt' },
    });

    expect(res.statusCode).toBe(200);
    expect(await api.db.message.count({ where: { userId } })).toBe(1);
  });
});
