import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, type TestApi } from '../../../testing/test-api.ts';
import { enrolPhone, phoneDate, phoneRequest, signedHeaders, type EnrolledPhone } from '../../../testing/test-phone.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

interface Phone extends EnrolledPhone {
  apiKey: string;
  /** The path of its webhook, as `GET /webhooks` gives it. */
  path: string;
  signingKey: string;
}

async function phone(): Promise<Phone> {
  const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
  const enrolled = await enrolPhone(api.app, api.db, userId);
  const auth = { authorization: `Bearer ${enrolled.token}` };
  const [webhook] = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
  const signingKey: string = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json().webhooks.signing_key;
  return { ...enrolled, apiKey, path: new URL(webhook.url).pathname, signingKey };
}

/** The app's `sms:received` body (v1.54 and later), with `payload` fields overridden or removed (undefined). */
function received(p: Phone, payload: Record<string, unknown> = {}) {
  return {
    id: randomUUID().slice(0, 21),
    webhookId: 'smsgw-x',
    event: 'sms:received',
    deviceId: p.id,
    payload: {
      messageId: 'a1b2c3d4',
      message: 'Your code is 1234',
      sender: '+15557654321',
      recipient: '+15551234567',
      simNumber: 1,
      receivedAt: '2026-07-01T14:03:05.123+03:00',
      phoneNumber: '+15557654321',
      ...payload,
    },
  };
}

/** POSTs `body` as the app does: the raw JSON text, signed with `key` at `timestamp`. */
function deliver(p: Phone, body: unknown, options: { key?: string; timestamp?: number; path?: string; headers?: Record<string, string> } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return phoneRequest(api.app, 'POST', options.path ?? p.path, {
    raw,
    headers: { ...signedHeaders(options.key ?? p.signingKey, raw, options.timestamp), ...options.headers },
  });
}

async function stored(p: Phone) {
  return api.db.receivedMessage.findMany({ where: { deviceId: p.id }, orderBy: { createdAt: 'asc' } });
}

function expectJsonError(res: { statusCode: number; headers: Record<string, unknown>; json: () => { error: string } }, status: number, error: string) {
  expect({ status: res.statusCode, type: res.headers['content-type'], error: res.json().error }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
    error,
  });
}

describe('POST /inbound/:deviceId/:secret (the phone’s sms:received webhook)', () => {
  it('stores a signed incoming SMS once, even when the phone posts it again, and lists it once', async () => {
    const p = await phone();
    const body = received(p);

    const first = await deliver(p, body);
    const again = await deliver(p, { ...body, id: 'another-delivery' }, { path: p.path.replace('/mobile/v1/', '/api/mobile/v1//') });

    expect([first.statusCode, first.headers['content-type']]).toEqual([202, expect.stringMatching(/^application\/json/)]);
    expect([first.json(), again.statusCode, again.json()]).toEqual([{ stored: 1, duplicates: 0 }, 202, { stored: 0, duplicates: 1 }]);
    const rows = await stored(p);
    expect(rows.map((r) => [r.from, r.to, r.body, r.simNumber, r.receivedAt.toISOString()])).toEqual([
      ['+15557654321', '+15551234567', 'Your code is 1234', 1, '2026-07-01T11:03:05.123Z'],
    ]);
    const listed = await call(api.app, p.apiKey, 'GET', '/api/v1/sms/received');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((m: { id: string }) => m.id)).toEqual([rows[0]!.id]);
  });

  it('stores two SMS with the same hash received at different times', async () => {
    const p = await phone();
    await deliver(p, received(p));
    await deliver(p, received(p, { receivedAt: '2026-07-01T14:09:00.000+03:00' }));
    expect(await stored(p)).toHaveLength(2);
  });

  it('reads a v1.53 payload (no sender, no recipient) by its phoneNumber', async () => {
    const p = await phone();
    const body = received(p, { sender: undefined, recipient: undefined, simNumber: undefined });

    expect((await deliver(p, body)).statusCode).toBe(202);

    expect((await stored(p)).map((r) => [r.from, r.to, r.simNumber])).toEqual([['+15557654321', null, null]]);
  });

  it('stores an SMS with an unreadable receive time at its arrival, once whatever the retries', async () => {
    const p = await phone();
    const body = received(p, { receivedAt: '2026-07-01T14:03:05.123+-5:00' });
    const before = Date.now();

    await deliver(p, body);
    await deliver(p, body);

    const rows = await stored(p);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.receivedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('stores NUL bytes as U+FFFD and an out-of-range SIM number as unknown', async () => {
    const p = await phone();
    expect((await deliver(p, received(p, { message: 'a\u0000b', sender: '+1555\u0000', simNumber: 2 ** 40 }))).statusCode).toBe(202);
    expect((await stored(p)).map((r) => [r.body, r.from, r.simNumber])).toEqual([['a\uFFFDb', '+1555\uFFFD', null]]);
  });

  it('answers 2xx to the other events and stores nothing', async () => {
    const p = await phone();
    for (const event of ['system:ping', 'sms:sent', 'app:started', 'sms:data-received']) {
      const res = await deliver(p, { id: 'x', webhookId: 'y', event, deviceId: p.id, payload: { health: { status: 'pass' } } });
      expect(res.statusCode).toBe(202);
    }
    expect(await stored(p)).toEqual([]);
  });

  it('refuses a bad signature, a signature with another key, and none at all with 401', async () => {
    const p = await phone();
    const other = await phone();
    const raw = JSON.stringify(received(p));
    const attempts = [
      deliver(p, raw, { key: other.signingKey }),
      deliver(p, raw, { headers: { 'x-signature': signedHeaders(p.signingKey, `${raw} `)['x-signature']! } }),
      deliver(p, raw, { headers: { 'x-signature': 'zz' } }),
      phoneRequest(api.app, 'POST', p.path, { raw, headers: { 'x-timestamp': String(Math.floor(Date.now() / 1000)) } }),
    ];
    for (const res of await Promise.all(attempts)) expectJsonError(res, 401, 'unauthorized');
    expect(await stored(p)).toEqual([]);
  });

  it('refuses a timestamp more than 5 minutes away, or none, with 401', async () => {
    const p = await phone();
    const now = Math.floor(Date.now() / 1000);
    const raw = JSON.stringify(received(p));
    for (const timestamp of [now - 301, now + 301]) expectJsonError(await deliver(p, raw, { timestamp }), 401, 'unauthorized');
    const unsigned = await phoneRequest(api.app, 'POST', p.path, { raw, headers: { 'x-signature': signedHeaders(p.signingKey, raw)['x-signature']! } });
    expectJsonError(unsigned, 401, 'unauthorized');
    expect(await stored(p)).toEqual([]);
  });

  it('refuses a wrong URL secret, another phone’s secret and an unknown device with 401', async () => {
    const p = await phone();
    const other = await phone();
    const otherSecret = other.path.split('/').at(-1)!;
    const paths = [
      p.path.replace(/[^/]+$/, 'not-the-secret'),
      p.path.replace(/[^/]+$/, otherSecret),
      `/mobile/v1/inbound/${randomUUID()}/${otherSecret}`,
      `/mobile/v1/inbound/not-a-uuid/${otherSecret}`,
    ];
    for (const path of paths) expectJsonError(await deliver(p, received(p), { path }), 401, 'unauthorized');
    expect(await stored(p)).toEqual([]);
  });

  it('refuses a body naming another device with 403', async () => {
    const p = await phone();
    const other = await phone();
    expectJsonError(await deliver(p, { ...received(p), deviceId: other.id }), 403, 'forbidden');
    expect(await stored(p)).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"event": "sms:received", '],
    ['an array', '[]'],
    ['no event', JSON.stringify({ deviceId: 'x', payload: {} })],
  ])('refuses %s with 400 JSON', async (_, raw) => {
    const p = await phone();
    expectJsonError(await deliver(p, raw), 400, 'invalid_request');
  });

  it.each([
    ['no messageId', { messageId: undefined }],
    ['a message that is not text', { message: ['a'] }],
    ['no sender at all', { sender: undefined, phoneNumber: undefined }],
    ['a SIM number that is not a number', { simNumber: 'one' }],
    ['a receive time that is not text', { receivedAt: 1751367785 }],
  ])('refuses an sms:received payload with %s with 400 JSON', async (_, payload) => {
    const p = await phone();
    expectJsonError(await deliver(p, received(p, payload)), 400, 'invalid_request');
    expect(await stored(p)).toEqual([]);
  });

  it('refuses an sms:received of a revoked phone with 401', async () => {
    const p = await phone();
    await api.db.device.update({ where: { id: p.id }, data: { deletedAt: new Date() } });
    expectJsonError(await deliver(p, received(p, { receivedAt: phoneDate(new Date()) })), 401, 'unauthorized');
  });
});
