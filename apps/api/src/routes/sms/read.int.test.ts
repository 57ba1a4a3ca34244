import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@smsgw/core';
import { createTestUser, send, startTestApi, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOT_FOUND = { error: 'not_found', message: 'Message not found' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

/** A random E.164 number, so that no two tests share a recipient. */
function phone(): string {
  return `+1555${randomBytes(4).readUInt32BE(0).toString().padStart(10, '0').slice(0, 7)}`;
}

function getMessage(apiKey: string, id: string) {
  return api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { authorization: `Bearer ${apiKey}` } });
}

function list(apiKey: string, query: Record<string, string | number> = {}) {
  return api.app.inject({
    method: 'GET',
    url: '/api/v1/sms',
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
    headers: { authorization: `Bearer ${apiKey}` },
  });
}

/** Stores `count` messages of the user directly, one second apart, oldest first; returns their ids oldest first. */
async function storeMessages(userId: string, count: number, fields: { to?: string; deviceId?: string; createdAt?: Date } = {}): Promise<string[]> {
  const base = fields.createdAt ?? new Date('2026-11-21T10:00:00.000Z');
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId(),
    userId,
    to: fields.to ?? phone(),
    body: `message ${i}`,
    segments: 1,
    encoding: 'GSM_7' as const,
    deviceId: fields.deviceId ?? null,
    createdAt: new Date(base.getTime() + i * 1000),
    updatedAt: new Date(base.getTime() + i * 1000),
  }));
  await api.db.message.createMany({ data: rows });
  return rows.map((r) => r.id);
}

describe('GET /api/v1/sms/:id', () => {
  it('returns the full record of a message just sent: queued, no device, null event times', async () => {
    const { apiKey } = await createTestUser(api.db);
    const to = phone();
    const sent = await send(api.app, apiKey, { recipients: [to], body: 'hello there' });
    expect(sent.statusCode).toBe(200);
    const [id] = sent.json().message_ids as string[];

    const res = await getMessage(apiKey, id!);
    expect(res.statusCode).toBe(200);
    const record = res.json();
    const row = await api.db.message.findUniqueOrThrow({ where: { id: id! } });
    expect(record).toEqual({
      id,
      status: 'queued',
      state: 'pending',
      to,
      message: 'hello there',
      device_id: null,
      batch_id: null,
      segments: 1,
      encoding: 'GSM-7',
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      sent_at: null,
      delivered_at: null,
      error: null,
      send_at: null,
      valid_until: null,
      sim_number: null,
      attempts: [],
    });
    expect(record.created_at).toMatch(ISO_MS);
    expect(record.updated_at).toMatch(ISO_MS);
  });

  it('shows the batch, the device, the UCS-2 segment count and the event times with milliseconds in UTC', async () => {
    const { apiKey, deviceId } = await createTestUser(api.db);
    const body = 'Zażółć gęślą jaźń '.repeat(4); // 72 UTF-16 units, not GSM-7
    const sent = await send(api.app, apiKey, { recipients: [phone(), phone()], body });
    const { message_ids: ids, batch_id: batchId } = sent.json() as { message_ids: string[]; batch_id: string };
    await api.db.message.updateMany({
      where: { id: ids[0] },
      data: {
        state: 'delivered',
        deviceId,
        sentAt: new Date('2026-11-21T10:30:00Z'),
        deliveredAt: new Date('2026-11-21T10:30:02.5Z'),
        updatedAt: new Date('2026-11-21T10:30:02.5Z'),
      },
    });
    await api.db.message.updateMany({ where: { id: ids[1] }, data: { state: 'failed', deviceId, error: 'The device reported: no signal.' } });

    const delivered = (await getMessage(apiKey, ids[0]!)).json();
    expect(delivered).toMatchObject({
      status: 'delivered',
      state: 'delivered',
      message: body,
      device_id: deviceId,
      batch_id: batchId,
      segments: 2,
      encoding: 'UCS-2',
      sent_at: '2026-11-21T10:30:00.000Z',
      delivered_at: '2026-11-21T10:30:02.500Z',
      updated_at: '2026-11-21T10:30:02.500Z',
      error: null,
    });
    expect((await getMessage(apiKey, ids[1]!)).json()).toMatchObject({
      status: 'failed',
      state: 'failed',
      batch_id: batchId,
      sent_at: null,
      delivered_at: null,
      error: 'The device reported: no signal.',
    });
  });

  it('accepts the API key as X-API-Key too', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const [id] = await storeMessages(user.id, 1);
    const res = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(id);
  });

  it("answers the same 404 for another user's message, a missing id and a malformed id", async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const [id] = await storeMessages(owner.user.id, 1);
    expect((await getMessage(owner.apiKey, id!)).statusCode).toBe(200);

    for (const probe of [id!, newId(), 'not-a-uuid', '12345', `${id}x`, "1' OR '1'='1"]) {
      const res = await getMessage(other.apiKey, encodeURIComponent(probe));
      expect({ probe, status: res.statusCode, body: res.json() }).toEqual({ probe, status: 404, body: NOT_FOUND });
    }
    for (const probe of [newId(), 'not-a-uuid']) {
      const res = await getMessage(owner.apiKey, probe);
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 404, body: NOT_FOUND });
    }
  });

  it('is 401 without credentials, even for a message that exists', async () => {
    const { user } = await createTestUser(api.db);
    const [id] = await storeMessages(user.id, 1);
    const res = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED);
  });
});

describe('GET /api/v1/sms: paging', () => {
  it('returns {data, total, total_exact, has_more, next_cursor, limit, offset}, newest first, 20 by default', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const ids = await storeMessages(user.id, 25);
    const newestFirst = [...ids].reverse();

    const res = await list(apiKey);
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(Object.keys(page).sort()).toEqual(['data', 'has_more', 'limit', 'next_cursor', 'offset', 'total', 'total_exact']);
    expect(page).toMatchObject({ total: 25, total_exact: true, has_more: true, next_cursor: expect.any(String), limit: 20, offset: 0 });
    expect(page.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(0, 20));
    expect(page.data[0]).toMatchObject({ id: newestFirst[0], status: 'queued', state: 'pending', created_at: '2026-11-21T10:00:24.000Z' });
  });

  it('pages with offset and limit, and counts the whole filter in total', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const newestFirst = (await storeMessages(user.id, 25)).reverse();

    const second = (await list(apiKey, { offset: 20 })).json();
    expect(second).toMatchObject({ total: 25, limit: 20, offset: 20 });
    expect(second.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(20));

    const middle = (await list(apiKey, { limit: 7, offset: 5 })).json();
    expect(middle).toMatchObject({ total: 25, limit: 7, offset: 5 });
    expect(middle.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(5, 12));

    const past = (await list(apiKey, { offset: 25 })).json();
    expect(past).toEqual({ data: [], total: 25, total_exact: true, has_more: false, next_cursor: null, limit: 20, offset: 25 });
  });

  it('pages by cursor: each message once, and rows that arrive meanwhile do not shift the pages', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const newestFirst = (await storeMessages(user.id, 25)).reverse();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      const page = (await list(apiKey, { limit: 7, ...(cursor && { cursor }) })).json();
      seen.push(...page.data.map((m: { id: string }) => m.id));
      if (pages === 0) await storeMessages(user.id, 3, { createdAt: new Date('2026-11-21T11:00:00.000Z') }); // newer: not in the walk
      expect(page.has_more).toBe(page.next_cursor !== null);
      if (!page.has_more) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(newestFirst);
  });

  it('refuses a cursor it did not make, and a cursor with an offset, with 400 invalid_request', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    await storeMessages(user.id, 3);
    const { next_cursor } = (await list(apiKey, { limit: 1 })).json();
    for (const [query, message] of [
      [{ cursor: 'bm90IGEgY3Vyc29y' }, 'cursor is not a next_cursor of this list.'],
      [{ cursor: '' }, 'cursor'],
      [{ cursor: next_cursor, offset: 1 }, 'Give cursor or offset, not both.'],
    ] as const) {
      const res = await list(apiKey, query);
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_request' });
      expect(res.json().message).toContain(message);
    }
    expect((await list(apiKey, { cursor: next_cursor, offset: 0 })).statusCode).toBe(200);
  });

  it('counts up to 1,000, says 1,000 with total_exact false above, and pages on past it by offset and has_more', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const newestFirst = (await storeMessages(user.id, 1000)).reverse();
    expect((await list(apiKey, { limit: 1 })).json()).toMatchObject({ total: 1000, total_exact: true });
    newestFirst.unshift(...(await storeMessages(user.id, 5, { createdAt: new Date('2026-11-22T10:00:00.000Z') })).reverse());
    expect((await list(apiKey, { limit: 1 })).json()).toMatchObject({ total: 1000, total_exact: false, has_more: true });
    const past = (await list(apiKey, { limit: 10, offset: 1000 })).json();
    expect(past).toMatchObject({ total: 1000, total_exact: false, has_more: false, next_cursor: null, offset: 1000 });
    expect(past.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(1000));
  });

  it('accepts limit 100 and 1', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const newestFirst = (await storeMessages(user.id, 105)).reverse();
    const hundred = (await list(apiKey, { limit: 100 })).json();
    expect(hundred).toMatchObject({ total: 105, limit: 100, offset: 0 });
    expect(hundred.data).toHaveLength(100);
    const one = (await list(apiKey, { limit: 1 })).json();
    expect(one.data.map((m: { id: string }) => m.id)).toEqual([newestFirst[0]]);
  });

  it('orders messages created in the same instant by id, descending', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const at = new Date('2026-11-22T08:00:00.000Z');
    const ids = [newId(), newId(), newId()];
    await api.db.message.createMany({
      data: ids.map((id, i) => ({
        id,
        userId: user.id,
        to: phone(),
        body: `same ${i}`,
        segments: 1,
        encoding: 'GSM_7' as const,
        createdAt: at,
        updatedAt: at,
      })),
    });
    const page = (await list(apiKey)).json();
    expect(page.data.map((m: { id: string }) => m.id)).toEqual([...ids].sort().reverse());
  });

  it.each([
    ['limit', '101'],
    ['limit', '0'],
    ['limit', '-1'],
    ['limit', 'abc'],
    ['limit', '1.5'],
    ['limit', ''],
    ['offset', '-1'],
    ['offset', 'abc'],
    ['offset', '2.5'],
    ['offset', '9223372036854775808'],
    ['offset', '2147483648'],
    ['to', ' 15551234567'],
    ['to', '15551234567'],
    ['to', '+1555 123'],
  ])('refuses %s=%j with 400 invalid_request naming the parameter', async (name, value) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await list(apiKey, { [name]: value });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error).toBe('invalid_request');
    expect(body.message).toContain(name);
  });
});

describe('GET /api/v1/sms: filters', () => {
  const STATES = ['pending', 'assigned', 'sending', 'sent', 'delivered', 'failed'] as const;

  /** A user with one message in each lifecycle state; returns the ids by state. */
  async function oneMessagePerState() {
    const user = await createTestUser(api.db);
    const ids = await storeMessages(user.user.id, STATES.length);
    const byState: Record<string, string> = {};
    for (const [i, state] of STATES.entries()) {
      await api.db.message.updateMany({ where: { id: ids[i] }, data: { state } });
      byState[state] = ids[i]!;
    }
    return { ...user, byState };
  }

  it.each([
    ['queued', ['pending', 'assigned']],
    ['pending', ['pending']],
    ['assigned', ['assigned']],
    ['sending', ['sending']],
    ['sent', ['sent']],
    ['delivered', ['delivered']],
    ['failed', ['failed']],
  ])('status=%s matches the states %j', async (status, states) => {
    const { apiKey, byState } = await oneMessagePerState();
    const res = await list(apiKey, { status });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.total).toBe(states.length);
    expect(page.data.map((m: { id: string }) => m.id).sort()).toEqual(states.map((s) => byState[s]).sort());
    for (const m of page.data) expect(states).toContain(m.state);
  });

  it('shows status queued for pending and assigned messages and the lifecycle value in state', async () => {
    const { apiKey } = await oneMessagePerState();
    const page = (await list(apiKey)).json();
    const pairs = page.data.map((m: { status: string; state: string }) => [m.state, m.status]).sort();
    expect(pairs).toEqual(
      [
        ['pending', 'queued'],
        ['assigned', 'queued'],
        ['sending', 'sending'],
        ['sent', 'sent'],
        ['delivered', 'delivered'],
        ['failed', 'failed'],
      ].sort(),
    );
  });

  it.each(['bogus', 'QUEUED', 'accepted', ''])('refuses status=%j with 400 invalid_request', async (status) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await list(apiKey, { status });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('status') });
  });

  it('filters by exact recipient, alone and with a status', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const to = phone();
    const mine = await storeMessages(user.id, 3, { to });
    await storeMessages(user.id, 2);
    await api.db.message.updateMany({ where: { id: mine[0] }, data: { state: 'sent' } });

    const all = (await list(apiKey, { to })).json();
    expect(all.total).toBe(3);
    expect(all.data.map((m: { id: string }) => m.id)).toEqual([...mine].reverse());
    const sent = (await list(apiKey, { to, status: 'sent' })).json();
    expect(sent.data.map((m: { id: string }) => m.id)).toEqual([mine[0]]);
    // Exact match only: a prefix of the number matches nothing.
    expect((await list(apiKey, { to: to.slice(0, -1) })).json().total).toBe(0);
    // The largest offset is taken (and finds nothing), not refused by the database.
    expect((await list(apiKey, { offset: 2_147_483_647 })).json()).toMatchObject({ data: [], offset: 2_147_483_647 });
  });

  it('filters by batch_id', async () => {
    const { apiKey } = await createTestUser(api.db);
    const batch = (await send(api.app, apiKey, { recipients: [phone(), phone(), phone()], body: 'batch' })).json();
    await send(api.app, apiKey, { recipients: [phone(), phone()], body: 'another batch' });
    await send(api.app, apiKey, { recipients: [phone()], body: 'single' });

    const page = (await list(apiKey, { batch_id: batch.batch_id })).json();
    expect(page.total).toBe(3);
    expect(page.data.map((m: { id: string }) => m.id).sort()).toEqual([...batch.message_ids].sort());
    for (const m of page.data) expect(m.batch_id).toBe(batch.batch_id);
  });

  it('filters by device_id', async () => {
    const { apiKey, user } = await createTestUser(api.db, { devices: 2 });
    const devices = await api.db.device.findMany({ where: { userId: user.id }, orderBy: { name: 'asc' } });
    const first = await storeMessages(user.id, 2, { deviceId: devices[0]!.id });
    await storeMessages(user.id, 3, { deviceId: devices[1]!.id });
    await storeMessages(user.id, 1);

    const page = (await list(apiKey, { device_id: devices[0]!.id })).json();
    expect(page.total).toBe(2);
    expect(page.data.map((m: { id: string }) => m.id)).toEqual([...first].reverse());
    for (const m of page.data) expect(m.device_id).toBe(devices[0]!.id);
  });

  it.each(['batch_id', 'device_id'])('refuses a malformed %s with 400 invalid_request', async (name) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await list(apiKey, { [name]: 'not-a-uuid' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining(name) });
  });

  it("never lists another user's messages, whatever the filter", async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const to = phone();
    const alices = await storeMessages(alice.user.id, 2, { to });
    const bobs = await storeMessages(bob.user.id, 3, { to, deviceId: bob.deviceId });
    const bobBatch = (await send(api.app, bob.apiKey, { recipients: [phone(), phone()], body: 'bob' })).json();

    const page = (await list(alice.apiKey, { limit: 100 })).json();
    expect(page.total).toBe(2);
    expect(page.data.map((m: { id: string }) => m.id)).toEqual([...alices].reverse());
    expect((await list(alice.apiKey, { to })).json().total).toBe(2);
    expect((await list(alice.apiKey, { device_id: bob.deviceId! })).json()).toMatchObject({ data: [], total: 0 });
    expect((await list(alice.apiKey, { batch_id: bobBatch.batch_id })).json()).toMatchObject({ data: [], total: 0 });
    expect((await list(bob.apiKey, { to })).json().total).toBe(bobs.length);
  });

  it('is 401 without credentials', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/sms' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED);
  });
});
