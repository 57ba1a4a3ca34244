import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicUrl } from '@smsgw/config';
import { createPairing, deleteDevice } from '@smsgw/db';
import { createTestUser, startTestApi, type TestApi } from '../../../testing/test-api.ts';
import { APP_VERSION, enrolPhone, nextAddress, phoneRequest, type PhoneMethod } from '../../../testing/test-phone.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const JSON_TYPE = /^application\/json/;
const SIM_CARDS = [{ slotIndex: 0, simNumber: 1, phoneNumber: '*******4567', carrierName: '****bile', iccid: '***************1234' }];

async function newUser() {
  return (await createTestUser(api.db, { devices: 0 })).userId;
}

function register(authorization: string | undefined, body: unknown = { name: 'Google/sdk_gphone64' }, path = '/mobile/v1/device') {
  return phoneRequest(api.app, 'POST', path, { ...(authorization && { authorization }), body, remoteAddress: nextAddress() });
}

function deviceRow(id: string) {
  return api.db.device.findUniqueOrThrow({ where: { id } });
}

function expectJsonError(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, error: string) {
  expect({ status: res.statusCode, type: res.headers['content-type'], body: res.json() }).toEqual({
    status,
    type: expect.stringMatching(JSON_TYPE),
    body: { error, message: expect.any(String) },
  });
}

describe('POST /device (registration)', () => {
  it('registers a phone by code: 201 {id, token, login}, an SMS Gate device with the app version, no push token and its SIM cards', async () => {
    const userId = await newUser();
    const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });

    const res = await register(`Code ${code}`, { name: 'Google/sdk_gphone64', simCards: SIM_CARDS });

    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['id', 'login', 'token']);
    expect(body.login.length).toBeGreaterThan(0);
    expect(body.login.length).toBeLessThanOrEqual(64);
    const row = await deviceRow(body.id);
    expect([row.userId, row.protocol, row.name, row.appVersion, row.pushToken, row.simCards]).toEqual([
      userId,
      'sms_gate',
      'Google/sdk_gphone64',
      APP_VERSION,
      false,
      SIM_CARDS,
    ]);
    const check = await phoneRequest(api.app, 'PATCH', '/mobile/v1/device', { authorization: `Bearer ${body.token}`, body: { id: body.id } });
    expect(check.statusCode).toBe(204);
  });

  it('registers a phone by pairing token ("Sign up" with a private token) and flags a phone that sent a push token', async () => {
    const userId = await newUser();
    const { token } = await createPairing(api.db, { userId, ttlSeconds: 600 });

    const res = await register(`Bearer ${token}`, { name: 'Samsung/a52q', pushToken: 'f3Xc:APA91b' }, '/api/mobile/v1/device');

    expect(res.statusCode).toBe(201);
    const row = await deviceRow(res.json().id);
    expect([row.userId, row.protocol, row.pushToken]).toEqual([userId, 'sms_gate', true]);
  });

  it('spends a pairing on its first registration: its code and its token then get 401, and only one device exists', async () => {
    const userId = await newUser();
    const { code, token } = await createPairing(api.db, { userId, ttlSeconds: 600 });
    expect((await register(`Code ${code}`)).statusCode).toBe(201);

    expectJsonError(await register(`Code ${code}`), 401, 'unauthorized');
    expectJsonError(await register(`Bearer ${token}`), 401, 'unauthorized');
    expect(await api.db.device.count({ where: { userId } })).toBe(1);
  });

  it('spends a pairing token once, and its code with it', async () => {
    const userId = await newUser();
    const { code, token } = await createPairing(api.db, { userId, ttlSeconds: 600 });
    expect((await register(`Bearer ${token}`)).statusCode).toBe(201);

    expectJsonError(await register(`Bearer ${token}`), 401, 'unauthorized');
    expectJsonError(await register(`Code ${code}`), 401, 'unauthorized');
  });

  it('refuses an expired pairing with 401', async () => {
    const userId = await newUser();
    const { code, token } = await createPairing(api.db, { userId, ttlSeconds: 600, now: new Date(Date.now() - 601_000) });

    expectJsonError(await register(`Code ${code}`), 401, 'unauthorized');
    expectJsonError(await register(`Bearer ${token}`), 401, 'unauthorized');
    expect(await api.db.device.count({ where: { userId } })).toBe(0);
  });

  it('refuses no authorization, Basic, unknown secrets and device tokens with 401, without spending the pairing', async () => {
    const userId = await newUser();
    const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const attempts = [
      undefined,
      'Basic dXNlcjpwYXNzd29yZA==',
      'Code 00000000',
      'Code abc',
      `Bearer smsgw_pt_${randomBytes(24).toString('base64url')}`,
      `Bearer ${code}`,
      `Bearer ${phone.token}`,
      `Token ${code}`,
    ];
    for (const authorization of attempts) expectJsonError(await register(authorization), 401, 'unauthorized');

    expect((await register(`Code ${code}`)).statusCode).toBe(201);
  });

  it.each([
    ['no name', {}],
    ['a name that is not text', { name: 42 }],
    ['a push token that is not text', { name: 'x/y', pushToken: 7 }],
    ['a body that is not an object', ['x/y']],
  ])('refuses %s with 400 JSON, without spending the pairing', async (_, body) => {
    const userId = await newUser();
    const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });

    expectJsonError(await register(`Code ${code}`, body), 400, 'invalid_request');

    expect((await register(`Code ${code}`)).statusCode).toBe(201);
  });

  it('refuses malformed JSON with 400 JSON', async () => {
    const { code } = await createPairing(api.db, { userId: await newUser(), ttlSeconds: 600 });
    const res = await phoneRequest(api.app, 'POST', '/mobile/v1/device', {
      authorization: `Code ${code}`,
      raw: '{"name": "x/y"',
      remoteAddress: nextAddress(),
    });
    expectJsonError(res, 400, 'invalid_request');
  });

  it('stores a name and SIM cards with NUL bytes, lone surrogates and junk as plain text, keeping only the fields the app sends', async () => {
    const userId = await newUser();
    const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });
    // A lone surrogate, sent or left by cutting an emoji at 64 characters, is an escape jsonb refuses (a 500 before).
    const simCards = [
      { slotIndex: 0, phoneNumber: '**\u000045', carrierName: 'x'.repeat(500), iccid: '\ud800', extra: { deep: [1] } },
      { carrierName: `${'x'.repeat(63)}😀` },
      'junk',
      null,
    ];

    const res = await register(`Code ${code}`, { name: 'Bad\u0000Phone', simCards });

    expect(res.statusCode).toBe(201);
    const row = await deviceRow(res.json().id);
    expect([row.name, row.simCards]).toEqual([
      'Bad\uFFFDPhone',
      [{ slotIndex: 0, phoneNumber: '**\uFFFD45', carrierName: 'x'.repeat(64), iccid: '\uFFFD' }, { carrierName: `${'x'.repeat(63)}\uFFFD` }],
    ]);
    const patched = await phoneRequest(api.app, 'PATCH', '/mobile/v1/device', {
      authorization: `Bearer ${res.json().token}`,
      body: { id: res.json().id, simCards: [{ iccid: '\udfff' }] },
    });
    expect(patched.statusCode).toBe(204);
    expect((await deviceRow(res.json().id)).simCards).toEqual([{ iccid: '\uFFFD' }]);
  });

  it('takes the registration at a base typed with a trailing slash (`//device`) at both prefixes', async () => {
    const userId = await newUser();
    for (const path of ['/mobile/v1//device', '/api/mobile/v1//device']) {
      const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });
      expect((await register(`Code ${code}`, { name: 'x/y' }, path)).statusCode).toBe(201);
    }
  });
});

describe('device token authentication', () => {
  const endpoints: [PhoneMethod, string, unknown?][] = [
    ['PATCH', '/device', { id: randomUUID() }],
    ['GET', '/device'],
    ['GET', '/message'],
    ['GET', '/message?order=fifo'],
    ['PATCH', '/message', [{ id: randomUUID(), state: 'Sent', recipients: [], states: {} }]],
    ['GET', '/events'],
    ['GET', '/settings'],
    ['GET', '/webhooks'],
    ['PATCH', '/user/password', { currentPassword: 'a'.repeat(14), newPassword: 'b'.repeat(14) }],
  ];

  it.each(endpoints)('answers %s %s with 401 JSON for no, unknown, native and revoked tokens, at both prefixes', async (method, path, body) => {
    const { userId, devices } = await createTestUser(api.db, { devices: 1 });
    const revoked = await enrolPhone(api.app, api.db, userId);
    await deleteDevice(api.db, { userId, id: revoked.id });
    const headers = [
      undefined,
      `Bearer smsgw_dt_${randomBytes(24).toString('base64url')}`,
      `Bearer ${devices[0]!.token}`,
      `Bearer ${revoked.token}`,
      'Basic dTpw',
    ];
    for (const base of ['/mobile/v1', '/api/mobile/v1']) {
      for (const authorization of headers) {
        const res = await phoneRequest(api.app, method, `${base}${path}`, { ...(authorization && { authorization }), body });
        expectJsonError(res, 401, 'unauthorized');
      }
    }
  });
});

describe('PATCH /device', () => {
  it('answers 204 and records the push token flag, the SIM cards and the app version of the User-Agent', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId, { name: 'x/y', pushToken: 'tok' });
    await api.db.device.update({ where: { id: phone.id }, data: { appVersion: '1.60.0' } });
    const patch = (body: object) => phoneRequest(api.app, 'PATCH', '/mobile/v1//device', { authorization: `Bearer ${phone.token}`, body });

    expect((await patch({ id: phone.id, simCards: SIM_CARDS })).statusCode).toBe(204);
    let row = await deviceRow(phone.id);
    expect([row.pushToken, row.simCards, row.appVersion]).toEqual([false, SIM_CARDS, APP_VERSION]);

    expect((await patch({ id: phone.id, pushToken: 'tok2' })).statusCode).toBe(204);
    row = await deviceRow(phone.id);
    expect([row.pushToken, row.simCards]).toEqual([true, SIM_CARDS]);
  });

  it("answers 403 JSON when the id is another device's, and changes nothing", async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const other = await enrolPhone(api.app, api.db, userId, { name: 'x/y', pushToken: 'tok' });

    const res = await phoneRequest(api.app, 'PATCH', '/mobile/v1/device', { authorization: `Bearer ${phone.token}`, body: { id: other.id } });

    expectJsonError(res, 403, 'forbidden');
    expect((await deviceRow(other.id)).pushToken).toBe(true);
  });

  it.each([
    ['no id', {}],
    ['an id that is not text', { id: 5 }],
    ['an array', []],
  ])('refuses %s with 400 JSON', async (_, body) => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const res = await phoneRequest(api.app, 'PATCH', '/mobile/v1/device', { authorization: `Bearer ${phone.token}`, body });
    expectJsonError(res, 400, 'invalid_request');
  });
});

describe('GET /device, GET /user/code, PATCH /user/password', () => {
  it('tells the phone the address its requests come from', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const res = await phoneRequest(api.app, 'GET', '/mobile/v1/device', { authorization: `Bearer ${phone.token}`, remoteAddress: '203.0.113.7' });
    expect({ status: res.statusCode, type: res.headers['content-type'], body: res.json() }).toEqual({
      status: 200,
      type: expect.stringMatching(JSON_TYPE),
      body: { externalIp: '203.0.113.7' },
    });
  });

  it('reads the address from X-Forwarded-For only behind a trusted proxy (TRUST_PROXY)', async () => {
    const proxied = await startTestApi({ TRUST_PROXY: '127.0.0.1' });
    try {
      for (const [target, expected] of [
        [api, '127.0.0.1'],
        [proxied, '203.0.113.9'],
      ] as const) {
        const { userId } = await createTestUser(target.db, { devices: 0 });
        const phone = await enrolPhone(target.app, target.db, userId);
        const res = await phoneRequest(target.app, 'GET', '/mobile/v1/device', {
          authorization: `Bearer ${phone.token}`,
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': '203.0.113.9' },
        });
        expect(res.json()).toEqual({ externalIp: expected });
      }
    } finally {
      await proxied.close();
    }
  });

  it('answers the user account calls with 501 JSON', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    expectJsonError(await phoneRequest(api.app, 'GET', '/mobile/v1/user/code', { authorization: 'Basic dTpw' }), 501, 'not_implemented');
    const password = { currentPassword: 'a'.repeat(14), newPassword: 'b'.repeat(14) };
    const res = await phoneRequest(api.app, 'PATCH', '/api/mobile/v1/user/password', { authorization: `Bearer ${phone.token}`, body: password });
    expectJsonError(res, 501, 'not_implemented');
  });
});

describe('GET /settings and GET /webhooks', () => {
  it('gives the phone SSE only and its signing key, the same on every call', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const { signingKey } = await deviceRow(phone.id);

    const answers = [];
    for (const path of ['/mobile/v1/settings', '/api/mobile/v1//settings']) {
      const res = await phoneRequest(api.app, 'GET', path, { authorization: `Bearer ${phone.token}` });
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, expect.stringMatching(JSON_TYPE)]);
      answers.push(res.json());
    }

    expect(signingKey).toMatch(/^\S{16,}$/);
    expect(answers).toEqual([
      { gateway: { notification_channel: 'SSE_ONLY' }, webhooks: { signing_key: signingKey }, ping: { interval_seconds: 60 } },
      { gateway: { notification_channel: 'SSE_ONLY' }, webhooks: { signing_key: signingKey }, ping: { interval_seconds: 60 } },
    ]);
  });

  it('gives the phone its sms:received and system:ping webhooks to its own secret address, with a stable id of at most 36 characters', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const other = await enrolPhone(api.app, api.db, userId);
    const { inboundSecret } = await deviceRow(phone.id);
    const webhooks = async (token: string) => (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', { authorization: `Bearer ${token}` })).json();

    const first = await webhooks(phone.token);

    const url = `${publicUrl(api.config)}/mobile/v1/inbound/${phone.id}/${inboundSecret}`;
    // And its health pings (system:ping, v1.16 and later) to the same signed address.
    expect(first).toEqual([
      { id: expect.any(String), url, event: 'sms:received' },
      { id: expect.any(String), url, event: 'system:ping' },
    ]);
    expect(first[0].id.length).toBeLessThanOrEqual(36);
    expect(await webhooks(phone.token)).toEqual(first);
    expect((await webhooks(other.token))[0].id).not.toBe(first[0].id);
  });

  it('makes the secrets of an SMS Gate device that has none, once', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    await api.db.device.update({ where: { id: phone.id }, data: { signingKey: null, inboundSecret: null } });
    const settings = async () => (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', { authorization: `Bearer ${phone.token}` })).json();

    const first = await settings();

    expect(first.webhooks.signing_key).toEqual((await deviceRow(phone.id)).signingKey);
    expect(await settings()).toEqual(first);
    expect((await deviceRow(phone.id)).inboundSecret).toMatch(/^\S{16,}$/);

    // Once made, a fetch only reads them: the row is not written again.
    const version = async () => (await api.sql.query<{ xmin: string }>('SELECT xmin::text FROM devices WHERE id = $1', [phone.id])).rows[0]!.xmin;
    const before = await version();
    expect(await settings()).toEqual(first);
    expect(await version()).toBe(before);
  });
});
