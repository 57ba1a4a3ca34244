/**
 * Fuzz of the SMS Gate mobile API (`/mobile/v1/*` and `/api/mobile/v1/*`): registration with fresh
 * pairings, the device record, pulls, state snapshots and the signed incoming-SMS webhook, with
 * valid credentials and bad payloads: never a 5xx, every 4xx `{error, message}`. The event stream,
 * which never ends, and the two 501 routes are left out.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages, createPairing } from '@smsgw/db';
import { createTestUser, send, uniquePhone } from '@smsgw/api/testing';
import { nextAddress, phoneDate, phoneOwner, phoneRequest, signedHeaders, type PhoneOwner } from '@smsgw/api/testing/phone';
import { IdPool, headerValue, hostileString, hostileValue, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, type FuzzRequest } from './requests.ts';

let api: FuzzApi;
let owner: PhoneOwner & { userId: string };
let nativeToken: string;
let inbound: { deviceId: string; secret: string; signingKey: string };
const messages = new IdPool();

beforeAll(async () => {
  api = await startFuzzApi();
  const phone = await phoneOwner(api.app, api.db);
  const { userId } = await api.db.device.findUniqueOrThrow({ where: { id: phone.phone.id } });
  owner = { ...phone, userId };
  nativeToken = (await createTestUser(api.db)).devices[0]!.token;
  const auth = { authorization: `Bearer ${phone.phone.token}` };
  const [webhook] = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
  const [deviceId, secret] = new URL(webhook.url).pathname.split('/').slice(-2) as [string, string];
  const signingKey: string = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json().webhooks.signing_key;
  inbound = { deviceId, secret, signingKey };
  const sent = await send(api.app, phone.apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone()], body: 'seed' });
  expect(sent.statusCode).toBe(200);
  const ids: string[] = sent.json().message_ids;
  await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: phone.phone.id })), now: new Date() });
  for (const id of ids) messages.add(id);
});
afterAll(async () => {
  await api?.close();
});

const prefix = fc.constantFrom('/mobile/v1', '/api/mobile/v1', '/mobile/v1/', '//mobile/v1');
const at = (path: string) => prefix.map((base) => `${base}${path}`);
const appHeaders = { 'user-agent': 'me.capcom.smsgateway/1.68.0' };

/** Mostly the phone's token; now and then a native device's, a malformed or a hostile one. */
const phoneAuth = () =>
  mostly<Record<string, string>>(
    fc.constant({ ...appHeaders, authorization: `Bearer ${owner.phone.token}` }),
    fc.constantFrom<Record<string, string>>(
      {},
      { authorization: `Bearer ${nativeToken}` },
      { authorization: `Bearer ${owner.phone.token}x` },
      { authorization: `Code ${owner.phone.token}` },
    ),
    headerValue.map((value) => ({ authorization: `Bearer ${value}`, 'user-agent': value })),
  );

const simCard = shaped({
  slotIndex: fc.nat(3),
  simNumber: fc.integer({ min: 1, max: 2 }),
  phoneNumber: plausible.phone,
  carrierName: fc.string(),
  iccid: fc.string(),
});
const simCards = mostly<unknown>(fc.array(simCard, { maxLength: 3 }), hostileValue);
const states = ['Pending', 'Processed', 'Sent', 'Delivered', 'Failed', 'Cancelling', 'Cancelled'];
const phoneClock = fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => phoneDate(date));
const deviceDate = fc.oneof(plausible.isoDate, phoneClock, hostileString);

describe('SMS Gate phone routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const snapshot = shaped({
      id: mostly(messages.arbitrary(), fc.uuid(), hostileString),
      state: mostly(fc.constantFrom(...states), hostileString),
      recipients: fc.array(shaped({ phoneNumber: plausible.phone, state: fc.constantFrom(...states), error: fc.string() }), { maxLength: 2 }),
      states: fc.dictionary(fc.constantFrom(...states), deviceDate),
    });
    const phoneId = mostly(fc.constant(owner.phone.id), fc.constant(owner.phone.id.toUpperCase()), fc.uuid(), hostileString);
    const requests = fc.oneof(
      route({ method: 'PATCH', path: at('/device'), body: shaped({ id: phoneId, pushToken: fc.string({ maxLength: 20 }), simCards }), headers: phoneAuth() }),
      route({ method: 'GET', path: fc.oneof(at('/device'), at('/settings'), at('/webhooks')), headers: phoneAuth() }),
      route({ method: 'GET', path: at('/message'), query: { order: fc.constantFrom('lifo', 'fifo') }, headers: phoneAuth() }),
      route({ method: 'PATCH', path: at('/message'), body: fc.array(snapshot, { maxLength: 3 }), headers: phoneAuth() }),
    );
    await fuzz(api, requests, { numRuns: 250 });
  });

  it('answer every registration below 500, and every 4xx as {error, message}', async () => {
    // FRESH stands for a pairing created just before the request is sent.
    const credential = mostly<Record<string, string>>(
      fc.constantFrom({ authorization: 'Code FRESH' }, { authorization: 'Bearer FRESH' }),
      fc.constantFrom<Record<string, string>>(
        {},
        { authorization: 'Code 12345678' },
        { authorization: `Code ${'1'.repeat(40)}` },
        { authorization: 'Bearer smsgw_pt_x' },
      ),
      headerValue.map((value) => ({ authorization: value })),
    );
    const requests = route({
      method: 'POST',
      path: at('/device'),
      body: shaped({ name: fc.string({ maxLength: 60 }), pushToken: fc.string({ maxLength: 20 }), simCards }),
      headers: credential.map((headers) => ({ ...appHeaders, ...headers })),
    });
    const prepare = async (request: FuzzRequest): Promise<FuzzRequest> => {
      const ready = { ...request, headers: { ...request.headers }, remoteAddress: nextAddress() };
      if (ready.headers.authorization?.endsWith(' FRESH')) {
        const { code, token } = await createPairing(api.db, { userId: owner.userId, ttlSeconds: 600 });
        ready.headers.authorization = ready.headers.authorization.startsWith('Code') ? `Code ${code}` : `Bearer ${token}`;
      }
      return ready;
    };
    await fuzz(api, requests, { numRuns: 120, prepare });
  });

  it('answer every incoming-SMS webhook below 500, and every 4xx as {error, message}', async () => {
    const payload = shaped({
      messageId: fc.string({ minLength: 1, maxLength: 12 }),
      message: fc.string({ maxLength: 80 }),
      sender: plausible.phone,
      phoneNumber: plausible.phone,
      recipient: plausible.phone,
      simNumber: fc.integer({ min: -1, max: 300 }),
      receivedAt: deviceDate,
    });
    const body = shaped({
      event: mostly(fc.constant('sms:received'), fc.constantFrom('sms:sent', 'system:ping', 'SMS:RECEIVED')),
      deviceId: mostly(fc.constant(inbound.deviceId), fc.constant(inbound.deviceId.toUpperCase()), fc.uuid()),
      payload,
      id: fc.string(),
      webhookId: fc.string(),
    });
    const path = fc
      .tuple(prefix, mostly(fc.constant(inbound.deviceId), pathId([])), mostly(fc.constant(inbound.secret), pathId([])))
      .map(([base, deviceId, secret]) => `${base}/inbound/${deviceId}/${secret}`);
    // How the request is signed: right, with a stale timestamp, a wrong key, or not at all.
    const signing = mostly(fc.constant('valid'), fc.constantFrom('stale', 'wrong-key', 'none'));
    const requests = fc
      .tuple(route({ method: 'POST', path, body, headers: appHeaders }), signing)
      .map(([request, sign]) => ({ ...request, headers: { ...request.headers, 'x-fuzz-sign': sign } }));
    const prepare = async (request: FuzzRequest): Promise<FuzzRequest> => {
      const { 'x-fuzz-sign': sign, ...headers } = request.headers;
      const body = request.payload ?? '';
      const now = Math.floor(Date.now() / 1000);
      const signature =
        sign === 'valid'
          ? signedHeaders(inbound.signingKey, body, now)
          : sign === 'stale'
            ? signedHeaders(inbound.signingKey, body, now - 3600)
            : sign === 'wrong-key'
              ? signedHeaders('wrong', body, now)
              : {};
      return { ...request, headers: { ...headers, ...signature } };
    };
    await fuzz(api, requests, { numRuns: 200, prepare });
  });
});
