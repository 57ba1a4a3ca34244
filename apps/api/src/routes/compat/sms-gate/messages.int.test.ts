import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import smsGateClientRoutes, { SMS_GATE_PREFIX } from './index.ts';
import { createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi, type TestUser } from '../../../testing/test-api.ts';

/**
 * SMS Gate's `/3rdparty/v1/messages` through inject: what a send stores, and every refusal in
 * upstream's status and `{message}` shape, changing nothing and charging nothing.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const bearer = (u: TestUser) => ({ authorization: `Bearer ${u.apiKey}` });
const post = (u: TestUser, payload: object, url = '/3rdparty/v1/messages') => api.app.inject({ method: 'POST', url, headers: bearer(u), payload });
const get = (u: TestUser, url: string) => api.app.inject({ method: 'GET', url, headers: bearer(u) });

describe('POST /3rdparty/v1/messages', () => {
  it('accepts a message to several recipients as one batch named by the client id: 202, Location, Pending', async () => {
    const u = await createTestUser(api.db);
    const [a, b] = [phone(), phone()];
    const res = await post(u, {
      id: 'order-1042',
      textMessage: { text: 'Shipped' },
      phoneNumbers: [a, b],
      priority: 100,
      withDeliveryReport: false,
      simNumber: 2,
    });
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe('/3rdparty/v1/messages/order-1042');
    expect(res.json()).toEqual({
      id: 'order-1042',
      deviceId: '',
      state: 'Pending',
      isHashed: false,
      isEncrypted: false,
      recipients: [
        { phoneNumber: a, state: 'Pending' },
        { phoneNumber: b, state: 'Pending' },
      ],
      states: { Pending: expect.any(String) },
      textMessage: { text: 'Shipped' },
    });
    const batch = await api.db.batch.findFirstOrThrow({ where: { userId: u.userId }, include: { messages: true } });
    expect(batch.externalId).toBe('order-1042');
    expect(
      batch.messages.map((m) => ({ to: m.to, priority: m.priority, report: m.withDeliveryReport, sim: m.simNumber })).sort((x, y) => x.to.localeCompare(y.to)),
    ).toEqual([a, b].sort().map((to) => ({ to, priority: 100, report: false, sim: 2 })));
  });

  it('makes one batch of a single recipient too, named by its own id when the client gives none, and serves the deprecated /message', async () => {
    const u = await createTestUser(api.db);
    const res = await post(u, { message: 'Hello', phoneNumbers: [phone()] }, '/3rdparty/v1/message');
    expect(res.statusCode).toBe(202);
    const batch = await api.db.batch.findFirstOrThrow({ where: { userId: u.userId } });
    expect(res.json().id).toBe(batch.id);
    expect(batch.externalId).toBe(batch.id);
    expect((await get(u, `/3rdparty/v1/message/${batch.id}`)).json()).toMatchObject({ id: batch.id, textMessage: { text: 'Hello' } });
  });

  it('refuses a client id the user gave before with 409, and another user may use it', async () => {
    const [u, other] = [await createTestUser(api.db), await createTestUser(api.db)];
    expect((await post(u, { id: 'dup', message: 'one', phoneNumbers: [phone()] })).statusCode).toBe(202);
    const before = await sendFootprint(api, u.userId);
    const res = await post(u, { id: 'dup', message: 'two', phoneNumbers: [phone()] });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 409, body: { message: 'A message with the same ID already exists.' } });
    expect(await sendFootprint(api, u.userId)).toEqual(before);
    expect((await post(other, { id: 'dup', message: 'mine', phoneNumbers: [phone()] })).statusCode).toBe(202);
  });

  const refusals: [string, () => object, number, RegExp][] = [
    [
      'duplicate numbers',
      () => {
        const p = phone();
        return { message: 'x', phoneNumbers: [p, p] };
      },
      400,
      /^phone numbers must be unique$/,
    ],
    [
      'ttl with validUntil',
      () => ({ message: 'x', phoneNumbers: [phone()], ttl: 60, validUntil: new Date(Date.now() + 60_000).toISOString() }),
      400,
      /ttl and validUntil/,
    ],
    [
      'scheduleAt after the validity',
      () => ({ message: 'x', phoneNumbers: [phone()], ttl: 60, scheduleAt: new Date(Date.now() + 120_000).toISOString() }),
      400,
      /scheduleAt must be less than or equal to validUntil/,
    ],
    [
      'scheduleAt in the past',
      () => ({ message: 'x', phoneNumbers: [phone()], scheduleAt: new Date(Date.now() - 1000).toISOString() }),
      400,
      /scheduleAt must be in the future/,
    ],
    ['a data message', () => ({ dataMessage: { data: 'SGVsbG8=', port: 53739 }, phoneNumbers: [phone()] }), 400, /data messages are not supported/],
    [
      'an encrypted message to a plain number',
      () => ({ message: '$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdA==$Y2lwaGVy', phoneNumbers: [phone()], isEncrypted: true }),
      400,
      /row 1: not an SMS Gate ciphertext/,
    ],
    ['both message and textMessage', () => ({ message: 'a', textMessage: { text: 'b' }, phoneNumbers: [phone()] }), 400, /exactly one of/],
    ['no text', () => ({ phoneNumbers: [phone()] }), 400, /exactly one of/],
    ['no phone numbers', () => ({ message: 'x', phoneNumbers: [] }), 400, /phoneNumbers/],
    ['101 phone numbers', () => ({ message: 'x', phoneNumbers: Array.from({ length: 101 }, () => phone()) }), 400, /phoneNumbers/],
    ['an id longer than 36', () => ({ id: 'x'.repeat(37), message: 'x', phoneNumbers: [phone()] }), 400, /id/],
    ['a number without + and no PHONE_DEFAULT_REGION', () => ({ message: 'x', phoneNumbers: ['015123456789'] }), 400, /PHONE_DEFAULT_REGION/],
    ['a number that is not one', () => ({ message: 'x', phoneNumbers: ['+49 hello'] }), 400, /row 1/],
    ['a priority beyond int8', () => ({ message: 'x', phoneNumbers: [phone()], priority: 128 }), 400, /priority/],
    ['SIM 4', () => ({ message: 'x', phoneNumbers: [phone()], simNumber: 4 }), 400, /simNumber/],
    ['a device of nobody', () => ({ message: 'x', phoneNumbers: [phone()], deviceId: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01' }), 400, /Device .* not found/],
    ['a text with NUL', () => ({ message: 'a\u0000b', phoneNumbers: [phone()] }), 400, /NUL/],
  ];
  it.each(refusals)('refuses %s with %i {message}, changing nothing', async (_name, body, status, message) => {
    const u = await createTestUser(api.db);
    const before = await sendFootprint(api, u.userId);
    const res = await post(u, body());
    expect(res.statusCode).toBe(status);
    expect(Object.keys(res.json())).toEqual(['message']);
    expect(res.json().message).toMatch(message);
    expect(await sendFootprint(api, u.userId)).toEqual(before);
  });

  it('refuses a body that is not JSON, and a send over the quota, in the same shape', async () => {
    const u = await createTestUser(api.db, { monthlyQuota: 1 });
    const bad = await api.app.inject({
      method: 'POST',
      url: '/3rdparty/v1/messages',
      headers: { ...bearer(u), 'content-type': 'application/json' },
      payload: '{"phoneNumbers":',
    });
    expect({ status: bad.statusCode, keys: Object.keys(bad.json()) }).toEqual({ status: 400, keys: ['message'] });
    const over = await post(u, { message: 'x', phoneNumbers: [phone(), phone()] });
    expect({ status: over.statusCode, body: over.json() }).toEqual({ status: 402, body: { message: 'Monthly message quota exceeded' } });
    expect(await sendFootprint(api, u.userId)).toMatchObject({ messages: 0, batches: 0, quotaUsed: 0 });
  });

  it('answers 503 {message} when the user has no device to send with', async () => {
    const u = await createTestUser(api.db, { devices: 0 });
    const res = await post(u, { message: 'x', phoneNumbers: [phone()] });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 503, body: { message: 'No devices available to send messages' } });
  });
});

describe('numbers without + in PHONE_DEFAULT_REGION', () => {
  it('stores them in E.164', async () => {
    const regional = await startTestApi({ PHONE_DEFAULT_REGION: 'DE' });
    try {
      const u = await createTestUser(regional.db);
      const res = await regional.app.inject({
        method: 'POST',
        url: '/3rdparty/v1/messages',
        headers: bearer(u),
        payload: { message: 'x', phoneNumbers: ['0151 23456789'] },
      });
      expect(res.statusCode).toBe(202);
      expect(res.json().recipients).toEqual([{ phoneNumber: '+4915123456789', state: 'Pending' }]);
    } finally {
      await regional.close();
    }
  });

  it('refuses to start with a region libphonenumber does not know', async () => {
    const app = Fastify().decorate('config', { ...api.config, PHONE_DEFAULT_REGION: 'XX' });
    await expect(app.register(smsGateClientRoutes, { prefix: SMS_GATE_PREFIX }).ready()).rejects.toThrow(/PHONE_DEFAULT_REGION=XX/);
    await app.close();
  });
});
