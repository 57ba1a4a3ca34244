import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages, offerMessages } from '@smsgw/db';
import { createTestUser, send, startTestApi, uniquePhone as phone, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { enrolConnectedPhone } from '../../../testing/test-phone.ts';

/** Reading SMS Gate messages: states from smsgw's records, listing, the login check and the API's own answers. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const bearer = (u: TestUser) => ({ authorization: `Bearer ${u.apiKey}` });
const get = (u: TestUser, url: string) => api.app.inject({ method: 'GET', url, headers: bearer(u) });

async function gateSend(u: TestUser, id: string, count: number, extra: object = {}) {
  const res = await api.app.inject({
    method: 'POST',
    url: '/3rdparty/v1/messages',
    headers: bearer(u),
    payload: { id, message: id, phoneNumbers: Array.from({ length: count }, () => phone()), ...extra },
  });
  expect(res.statusCode).toBe(202);
  return api.db.message.findMany({ where: { batch: { externalId: id, userId: u.userId } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/** Moves a message as the device core would have: the state and its time. */
async function move(id: string, state: 'sending' | 'sent' | 'delivered' | 'failed', at: Date, deviceId: string) {
  const column = { sending: 'sendingAt', sent: 'sentAt', delivered: 'deliveredAt', failed: 'failedAt' }[state];
  await api.db.message.update({ where: { id }, data: { state, deviceId, [column]: at, ...(state === 'failed' && { error: 'RESULT_ERROR_GENERIC_FAILURE' }) } });
}

describe('GET /3rdparty/v1/messages/:id', () => {
  it("aggregates the recipients in the app's order and times each state the message reached", async () => {
    const u = await createTestUser(api.db);
    const device = u.deviceId!;
    const [a, b] = await gateSend(u, 'agg', 2);
    const t = (s: number) => new Date(a!.createdAt.getTime() + s * 1000);
    const state = async () => (await get(u, '/3rdparty/v1/messages/agg')).json();

    await move(a!.id, 'sending', t(1), device);
    expect(await state()).toMatchObject({ state: 'Pending', deviceId: device, recipients: [{ state: 'Processed' }, { state: 'Pending' }] });
    await move(b!.id, 'sent', t(2), device);
    expect((await state()).state).toBe('Processed');
    await move(a!.id, 'delivered', t(3), device);
    expect((await state()).state).toBe('Sent');
    await move(b!.id, 'failed', t(4), device);
    const final = await state();
    expect(final).toMatchObject({
      state: 'Sent',
      recipients: [
        { phoneNumber: a!.to, state: 'Delivered' },
        { phoneNumber: b!.to, state: 'Failed', error: 'RESULT_ERROR_GENERIC_FAILURE' },
      ],
    });
    expect(final.recipients[0]).not.toHaveProperty('error');
    expect(final.states).toEqual({ Pending: a!.createdAt.toISOString(), Processed: t(2).toISOString(), Sent: t(3).toISOString() });
  });

  it("answers 404 {message} for another user's message and an unknown id", async () => {
    const [u, other] = [await createTestUser(api.db), await createTestUser(api.db)];
    await gateSend(u, 'mine', 1);
    for (const url of ['/3rdparty/v1/messages/mine', '/3rdparty/v1/messages/unknown']) {
      const res = await get(other, url);
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 404, body: { message: 'message not found' } });
    }
  });
});

describe('DELETE /3rdparty/v1/messages/:id', () => {
  it('answers Cancelling while an SMS Gate phone that holds the message is asked, cancelling at once what no device holds', async () => {
    const u = await createTestUser(api.db, { devices: 0 });
    const held = await enrolConnectedPhone(api.app, api.db, u.userId);
    await api.db.device.update({ where: { id: held.id }, data: { appVersion: '1.68.0' } });
    const [a, b] = await gateSend(u, 'half-held', 2);
    await assignMessages(api.sql, { assignments: [{ id: a!.id, deviceId: held.id }], now: new Date() });
    expect(await offerMessages(api.sql, { deviceId: held.id, limit: 10, order: 'oldest', now: new Date() })).toHaveLength(1);

    const res = await api.app.inject({ method: 'DELETE', url: '/3rdparty/v1/messages/half-held', headers: bearer(u) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      state: 'Cancelling',
      recipients: [
        { phoneNumber: a!.to, state: 'Cancelling' },
        { phoneNumber: b!.to, state: 'Cancelled' },
      ],
    });
    expect((await api.db.message.findUniqueOrThrow({ where: { id: b!.id } })).state).toBe('cancelled');
    const again = await api.app.inject({ method: 'DELETE', url: '/3rdparty/v1/messages/half-held', headers: bearer(u) });
    expect({ status: again.statusCode, body: again.json() }).toEqual({ status: 409, body: { message: 'message is not pending' } });
  });
});

describe('GET /3rdparty/v1/messages', () => {
  it('lists every send of the user, from either API, newest first, with filters, the total in X-Total-Count', async () => {
    const u = await createTestUser(api.db);
    const [first] = await gateSend(u, 'first', 2);
    const native = await send(api.app, u.apiKey, { recipients: [phone()], body: 'native alone' });
    const nativeId = native.json().message_ids[0] as string;
    const [last] = await gateSend(u, 'last', 1, { deviceId: u.deviceId });
    await move(first!.id, 'sending', new Date(), u.deviceId!);

    const list = async (query: string) => {
      const res = await get(u, `/3rdparty/v1/messages${query}`);
      expect(res.statusCode).toBe(200);
      return { total: res.headers['x-total-count'], ids: (res.json() as { id: string }[]).map((m) => m.id), body: res.json() };
    };
    expect(await list('')).toMatchObject({ total: '3', ids: ['last', nativeId, 'first'] });
    expect((await list('')).body[0]).not.toHaveProperty('textMessage');
    expect((await list('?includeContent=true&sort=created_at')).body.map((m: { textMessage: { text: string } }) => m.textMessage.text)).toEqual([
      'first',
      'native alone',
      'last',
    ]);
    expect(await list('?state=Pending')).toMatchObject({ total: '3' });
    expect(await list('?state=Processed')).toMatchObject({ total: '0', ids: [] });
    expect(await list(`?deviceId=${u.deviceId}`)).toMatchObject({ total: '2', ids: ['last', 'first'] });
    expect(await list(`?from=${encodeURIComponent(last!.createdAt.toISOString())}`)).toMatchObject({ ids: ['last'] });
    expect(await list(`?to=${encodeURIComponent(last!.createdAt.toISOString())}`)).toMatchObject({ ids: [nativeId, 'first'] });
    expect(await list('?limit=1000&offset=2')).toMatchObject({ total: '3', ids: ['first'] });
    expect(await list('?offset=10')).toMatchObject({ total: '3', ids: [] });
  });

  it('filters by state exactly as the states read (the SQL twin of the aggregation agrees with it)', async () => {
    const u = await createTestUser(api.db);
    const device = u.deviceId!;
    const now = new Date();
    const setUps: Record<string, (ids: string[]) => Promise<unknown>> = {
      Pending: async ([a]) => move(a!, 'sending', now, device),
      Processed: async ([a, b]) => Promise.all([move(a!, 'sending', now, device), move(b!, 'sent', now, device)]),
      Sent: async ([a, b]) => Promise.all([move(a!, 'delivered', now, device), move(b!, 'failed', now, device)]),
      Delivered: async ([a, b]) => Promise.all([move(a!, 'delivered', now, device), move(b!, 'delivered', now, device)]),
      Failed: async ([a, b]) => Promise.all([move(a!, 'failed', now, device), move(b!, 'failed', now, device)]),
      Cancelled: async ([a, b]) =>
        Promise.all([move(a!, 'sent', now, device), api.db.message.update({ where: { id: b! }, data: { state: 'cancelled', cancelledAt: now } })]),
      Cancelling: async ([a, b]) =>
        Promise.all([
          api.db.message.update({ where: { id: a! }, data: { state: 'assigned', deviceId: device, cancelRequestedAt: now } }),
          api.db.message.update({ where: { id: b! }, data: { state: 'cancelled', cancelledAt: now } }),
        ]),
    };
    for (const [state, setUp] of Object.entries(setUps)) await setUp((await gateSend(u, `is-${state}`, 2)).map((m) => m.id));
    for (const state of Object.keys(setUps)) {
      expect((await get(u, `/3rdparty/v1/messages/is-${state}`)).json().state).toBe(state);
      const listed = await get(u, `/3rdparty/v1/messages?state=${state}`);
      expect([listed.headers['x-total-count'], listed.json().map((m: { id: string }) => m.id)]).toEqual(['1', [`is-${state}`]]);
    }
  });

  it('takes at most 100 a page whatever limit asks', async () => {
    const u = await createTestUser(api.db);
    for (let i = 0; i < 101; i++) await send(api.app, u.apiKey, { recipients: [phone()], body: `n${i}` });
    const res = await get(u, '/3rdparty/v1/messages?limit=500');
    expect([res.headers['x-total-count'], res.json().length]).toEqual(['101', 100]);
  });

  it.each([['state=Unknown'], ['limit=ten'], ['from=yesterday'], ['deviceId=not-a-device'], ['sort=name']])('refuses %s with 400 {message}', async (query) => {
    const u = await createTestUser(api.db);
    const res = await get(u, `/3rdparty/v1/messages?${query}`);
    expect({ status: res.statusCode, keys: Object.keys(res.json()) }).toEqual({ status: 400, keys: ['message'] });
  });
});

describe('the API as a whole', () => {
  it("answers the login check with 200, and 401 Unauthorized without credentials, with upstream's Link header", async () => {
    const u = await createTestUser(api.db);
    const basic = `Basic ${Buffer.from(`${u.user.name}:${u.apiKey}`).toString('base64')}`;
    for (const url of ['/3rdparty/v1/', '/3rdparty/v1']) {
      const ok = await api.app.inject({ method: 'GET', url, headers: { authorization: basic } });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers.link).toBe('</.well-known/api-catalog>; rel="api-catalog"');
    }
    for (const headers of [
      {},
      { authorization: 'Basic !!!' },
      { authorization: `Basic ${Buffer.from(u.apiKey).toString('base64')}` },
      { authorization: 'Bearer nope' },
    ]) {
      const refused = await api.app.inject({ method: 'GET', url: '/3rdparty/v1/', headers });
      expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 401, body: { message: 'Unauthorized' } });
    }
  });

  it('answers what it refuses before routing, and U+0000 in a path, in the same {message} shape', async () => {
    const u = await createTestUser(api.db);
    const long = await get(u, `/3rdparty/v1/messages/${'a'.repeat(101)}`);
    expect({ status: long.statusCode, body: long.json() }).toEqual({
      status: 414,
      body: { message: 'A segment of the URL path is longer than 100 characters.' },
    });
    const badUtf8 = await get(u, '/3rdparty/v1/messages/%C0');
    expect({ status: badUtf8.statusCode, keys: Object.keys(badUtf8.json()) }).toEqual({ status: 400, keys: ['message'] });
    const nul = await get(u, '/3rdparty/v1/messages/%00');
    expect({ status: nul.statusCode, keys: Object.keys(nul.json()) }).toEqual({ status: 400, keys: ['message'] });
  });

  it('answers an unknown path with 404 {message}', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/3rdparty/v1/nothing' });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 404, body: { message: 'Cannot GET /3rdparty/v1/nothing' } });
  });
});
