import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@smsgw/core';
import { call, createTestUser, startTestApi, uniquePhone, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  // Webhook hosts resolve to a public address without DNS.
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.215.14'] });
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOT_FOUND = { error: 'not_found', message: 'Message not found' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

interface InboundItem {
  id?: string;
  from: string;
  to?: string;
  message: string;
  received_at: string;
  sim_number?: number;
}

function inbound(deviceToken: string, body: unknown) {
  return api.app.inject({ method: 'POST', url: '/api/v1/device/inbound', headers: { authorization: `Bearer ${deviceToken}` }, payload: body as object });
}

async function receive(deviceToken: string, messages: InboundItem[]): Promise<{ stored: number; duplicates: number }> {
  const res = await inbound(deviceToken, { messages });
  expect(res.statusCode).toBe(202);
  return res.json();
}

const sms = (fields: Partial<InboundItem> = {}): InboundItem => ({
  from: uniquePhone(),
  message: `hello ${randomBytes(3).toString('hex')}`,
  received_at: '2026-11-21T10:00:00.000Z',
  ...fields,
});

function list(apiKey: string, query: Record<string, string | number> = {}) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return call(api.app, apiKey, 'GET', `/api/v1/sms/received${qs ? `?${qs}` : ''}`);
}

/** Stores `count` received SMS of the device directly, one second apart, oldest first; returns their ids oldest first. */
async function storeReceived(userId: string, deviceId: string, count: number, fields: { from?: string; createdAt?: Date } = {}): Promise<string[]> {
  const base = fields.createdAt ?? new Date('2026-11-21T10:00:00.000Z');
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId(),
    userId,
    deviceId,
    from: fields.from ?? uniquePhone(),
    body: `sms ${i}`,
    receivedAt: new Date(base.getTime() + i * 1000 - 500),
    createdAt: new Date(base.getTime() + i * 1000),
  }));
  await api.db.receivedMessage.createMany({ data: rows });
  return rows.map((r) => r.id);
}

describe('GET /api/v1/sms/received and /:id', () => {
  it('lists and reads an SMS a device reported, as the received record', async () => {
    const { apiKey, devices, deviceId } = await createTestUser(api.db);
    const from = uniquePhone();
    const to = uniquePhone();
    await receive(devices[0]!.token, [{ id: 'sim-1', from, to, message: 'Your code is 1234', received_at: '2026-11-21T12:03:05.123+02:00', sim_number: 2 }]);

    const res = await list(apiKey);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      data: [
        {
          id: expect.any(String),
          from,
          to,
          message: 'Your code is 1234',
          device_id: deviceId,
          sim_number: 2,
          received_at: '2026-11-21T10:03:05.123Z',
          created_at: expect.stringMatching(ISO_MS),
        },
      ],
      total: 1,
      total_exact: true,
      has_more: false,
      next_cursor: null,
      limit: 20,
      offset: 0,
    });
    const one = await call(api.app, apiKey, 'GET', `/api/v1/sms/received/${body.data[0].id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(body.data[0]);
  });

  it('gives null `to` and `sim_number` when the device did not know them', async () => {
    const { apiKey, devices } = await createTestUser(api.db);
    await receive(devices[0]!.token, [sms()]);
    const [record] = (await list(apiKey)).json().data;
    expect({ to: record.to, sim_number: record.sim_number }).toEqual({ to: null, sim_number: null });
  });

  it('is not taken for a message id by GET /api/v1/sms/:id, and /api/v1/sms still lists sent messages only', async () => {
    const { apiKey, userId, deviceId } = await createTestUser(api.db);
    await storeReceived(userId, deviceId!, 1);
    expect((await list(apiKey)).json().total).toBe(1);
    const sent = await call(api.app, apiKey, 'GET', '/api/v1/sms');
    expect(sent.json()).toEqual({ data: [], total: 0, total_exact: true, has_more: false, next_cursor: null, limit: 20, offset: 0 });
  });

  it('lists newest first by arrival, then by id, and pages with limit and offset', async () => {
    const { apiKey, userId, deviceId } = await createTestUser(api.db);
    const ids = await storeReceived(userId, deviceId!, 5);
    // Two more arriving in the same millisecond: the larger id first.
    const same = new Date('2026-11-21T11:00:00.000Z');
    const tied = [randomUUID(), randomUUID()].sort();
    await api.db.receivedMessage.createMany({
      data: tied.map((id) => ({ id, userId, deviceId: deviceId!, from: '+15550000000', body: 'tie', receivedAt: same, createdAt: same })),
    });

    const all = (await list(apiKey, { limit: 100 })).json();
    expect(all.data.map((r: { id: string }) => r.id)).toEqual([tied[1], tied[0], ...[...ids].reverse()]);
    expect(all.total).toBe(7);

    const page = (await list(apiKey, { limit: 2, offset: 3 })).json();
    expect(page).toEqual({ data: expect.any(Array), total: 7, total_exact: true, has_more: true, next_cursor: expect.any(String), limit: 2, offset: 3 });
    expect(page.data.map((r: { id: string }) => r.id)).toEqual([ids[3], ids[2]]);
    expect((await list(apiKey, { offset: 7 })).json()).toEqual({
      data: [],
      total: 7,
      total_exact: true,
      has_more: false,
      next_cursor: null,
      limit: 20,
      offset: 7,
    });
  });

  it('filters by exact sender and by device', async () => {
    const { apiKey, userId, devices } = await createTestUser(api.db, { devices: 2 });
    const from = uniquePhone();
    const [a, b] = devices.map((d) => d.id) as [string, string];
    const fromA = await storeReceived(userId, a, 2, { from });
    const fromB = await storeReceived(userId, b, 1, { from, createdAt: new Date('2026-11-22T00:00:00.000Z') });
    const others = await storeReceived(userId, b, 2);

    const bySender = (await list(apiKey, { from })).json();
    expect(bySender.data.map((r: { id: string }) => r.id)).toEqual([fromB[0], fromA[1], fromA[0]]);
    expect(bySender.total).toBe(3);
    expect((await list(apiKey, { from: from.slice(0, -1) })).json().total).toBe(0);

    const byDevice = (await list(apiKey, { device_id: b })).json();
    expect(new Set(byDevice.data.map((r: { id: string }) => r.id))).toEqual(new Set([...fromB, ...others]));
    expect((await list(apiKey, { device_id: b, from })).json().data.map((r: { id: string }) => r.id)).toEqual(fromB);
    expect((await list(apiKey, { device_id: randomUUID() })).json().total).toBe(0);
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 101 }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: 1.5 }, 'limit'],
    [{ offset: -1 }, 'offset'],
    [{ device_id: 'not-a-uuid' }, 'device_id'],
  ])('answers 400 invalid_request for %j', async (query, name) => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const res = await list(apiKey, query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(name) });
  });

  it('answers the same 404 for an unknown id, a malformed id and another user’s SMS', async () => {
    const owner = await createTestUser(api.db);
    const [theirs] = await storeReceived(owner.userId, owner.deviceId!, 1);
    const { apiKey } = await createTestUser(api.db);
    for (const id of [randomUUID(), 'not-a-uuid', '123', theirs!]) {
      const res = await call(api.app, apiKey, 'GET', `/api/v1/sms/received/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
    expect((await list(apiKey)).json().total).toBe(0);
    expect((await list(apiKey, { device_id: owner.deviceId! })).json().total).toBe(0);
  });

  it('answers 401 without user credentials (a device token is none)', async () => {
    const { devices, userId, deviceId } = await createTestUser(api.db);
    const [id] = await storeReceived(userId, deviceId!, 1);
    for (const url of ['/api/v1/sms/received', `/api/v1/sms/received/${id}`]) {
      for (const headers of [{}, { authorization: `Bearer ${devices[0]!.token}` }]) {
        const res = await api.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual(UNAUTHORIZED);
      }
    }
  });
});

describe('POST /api/v1/device/inbound', () => {
  const countOf = (deviceId: string) => api.db.receivedMessage.count({ where: { deviceId } });

  it('stores an SMS once per id, however often it is posted', async () => {
    const { devices, deviceId } = await createTestUser(api.db);
    const token = devices[0]!.token;
    const item = sms({ id: 'abc-1' });

    expect(await receive(token, [item])).toEqual({ stored: 1, duplicates: 0 });
    expect(await receive(token, [item, sms({ id: 'abc-2' })])).toEqual({ stored: 1, duplicates: 1 });
    expect(await receive(token, [sms({ id: 'abc-3' }), sms({ id: 'abc-3' })])).toEqual({ stored: 1, duplicates: 1 });
    expect(await countOf(deviceId!)).toBe(3);
  });

  it('deduplicates per device: the same id from another device is another SMS; without an id every post is stored', async () => {
    const { devices } = await createTestUser(api.db, { devices: 2 });
    const item = sms({ id: 'same' });
    expect(await receive(devices[0]!.token, [item])).toEqual({ stored: 1, duplicates: 0 });
    expect(await receive(devices[1]!.token, [item])).toEqual({ stored: 1, duplicates: 0 });

    const anonymous = sms();
    expect(await receive(devices[0]!.token, [anonymous, anonymous])).toEqual({ stored: 2, duplicates: 0 });
  });

  it('stores NUL characters as U+FFFD instead of failing', async () => {
    const { devices, apiKey } = await createTestUser(api.db);
    const res = await inbound(devices[0]!.token, { messages: [sms({ id: 'nul\u0000id', from: 'BANK\u0000', message: 'a\u0000b' })] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ stored: 1, duplicates: 0 });
    const [record] = (await list(apiKey)).json().data;
    expect({ from: record.from, message: record.message }).toEqual({ from: 'BANK\uFFFD', message: 'a\uFFFDb' });
  });

  it.each([
    ['a missing from', { messages: [{ message: 'x', received_at: '2026-11-21T10:00:00Z' }] }, 'from'],
    ['a received_at that is no date', { messages: [{ from: '+15550001111', message: 'x', received_at: 'yesterday' }] }, 'received_at'],
    ['an unknown field in an item', { messages: [{ ...sms(), colour: 'red' }] }, 'colour'],
    ['an unknown top-level field', { messages: [sms()], extra: true }, 'extra'],
    ['no messages', { messages: [] }, 'messages'],
    ['501 messages', { messages: Array.from({ length: 501 }, () => sms()) }, 'messages'],
    ['a sim_number of 0', { messages: [{ ...sms(), sim_number: 0 }] }, 'sim_number'],
  ])('refuses %s with a 400 JSON error, storing nothing', async (_what, body, name) => {
    const { devices, deviceId } = await createTestUser(api.db);
    const res = await inbound(devices[0]!.token, body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(name) });
    expect(await countOf(deviceId!)).toBe(0);
  });

  it('takes 500 messages in one request', async () => {
    const { devices, deviceId } = await createTestUser(api.db);
    const messages = Array.from({ length: 500 }, (_, i) => sms({ id: `bulk-${i}` }));
    expect(await receive(devices[0]!.token, messages)).toEqual({ stored: 500, duplicates: 0 });
    expect(await countOf(deviceId!)).toBe(500);
  });

  it('answers 401 to user credentials and unknown tokens', async () => {
    const { apiKey } = await createTestUser(api.db);
    for (const headers of [{ 'x-api-key': apiKey }, { authorization: `Bearer ${apiKey}` }, { authorization: 'Bearer smsgw_dt_unknown' }]) {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/device/inbound', headers, payload: { messages: [sms()] } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
  });
});

describe('message.received webhooks', () => {
  async function webhook(apiKey: string, events: string[]): Promise<{ id: string; events: string[] }> {
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: `https://hooks.example/${randomBytes(4).toString('hex')}`, events });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  it('is an event type an endpoint may subscribe to', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const created = await webhook(apiKey, ['message.received', 'message.sent']);
    expect(created.events).toEqual(['message.received', 'message.sent']);
    const read = await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${created.id}`);
    expect(read.json().events).toEqual(['message.received', 'message.sent']);
  });

  it('writes one message.received delivery per subscribed endpoint for an SMS stored, none for its repeat', async () => {
    const { apiKey, devices, userId } = await createTestUser(api.db);
    const subscribed = await webhook(apiKey, ['message.received']);
    await webhook(apiKey, ['message.sent', 'message.delivered', 'message.failed']);
    const item = sms({ id: 'hooked', to: uniquePhone(), sim_number: 1 });

    await receive(devices[0]!.token, [item]);
    await receive(devices[0]!.token, [item]);

    const [record] = (await list(apiKey)).json().data;
    const deliveries = await api.db.webhookDelivery.findMany({ where: { userId } });
    expect(deliveries).toHaveLength(1);
    const delivery = deliveries[0]!;
    expect({ webhookId: delivery.webhookId, type: delivery.type, messageId: delivery.messageId, state: delivery.state }).toEqual({
      webhookId: subscribed.id,
      type: 'message.received',
      messageId: record.id,
      state: 'pending',
    });
    expect(delivery.occurredAt.toISOString()).toBe(record.created_at);
    expect(delivery.data).toMatchObject({ id: record.id, from_number: item.from, to_number: item.to, body: item.message, sim_number: 1 });
  });

  it('writes none for a disabled endpoint', async () => {
    const { apiKey, devices, userId } = await createTestUser(api.db);
    const { id } = await webhook(apiKey, ['message.received']);
    expect((await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${id}`, { enabled: false })).statusCode).toBe(200);
    await receive(devices[0]!.token, [sms()]);
    expect(await api.db.webhookDelivery.count({ where: { userId } })).toBe(0);
  });
});
