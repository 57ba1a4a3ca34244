/**
 * Fuzz of the device routes: the user's `/api/v1/devices` (with the Twilio incoming-SMS URLs of a
 * device and its SIMs, and `/api/v1/twilio/sms-deliveries`) and pairings, and the native device
 * protocol (`/api/v1/device/*`, with the device token or a bad one): never a 5xx, every 4xx
 * `{error, message}`. The event stream, which never ends, is left out.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '@smsgw/core';
import { assignMessages } from '@smsgw/db';
import { createTestUser, send, uniquePhone } from '@smsgw/api/testing';
import { IdPool, headerValue, hostileString, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';

// The stub DNS: every name is public but those that say otherwise, so that no lookup leaves the machine.
const resolver: Resolver = async (hostname) => {
  if (hostname.includes('nowhere')) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  if (hostname.includes('internal')) return ['10.1.2.3', '93.184.215.14'];
  return ['93.184.215.14'];
};

let api: FuzzApi;
let owner: ReturnType<typeof userAuth>;
let device: { id: string; token: string };
const devices = new IdPool();
const messages = new IdPool();

beforeAll(async () => {
  api = await startFuzzApi({}, { webhookResolver: resolver });
  const user = await createTestUser(api.db, { devices: 3 });
  owner = userAuth(user.apiKey, api.config.JWT_SECRET);
  for (const { id } of user.devices) devices.add(id);

  // The protocol's device belongs to a user of its own, whom the devices fuzz cannot disable.
  const sender = await createTestUser(api.db);
  device = sender.devices[0]!;
  const sent = await send(api.app, sender.apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone(), uniquePhone()], body: 'seed' });
  expect(sent.statusCode).toBe(200);
  const ids: string[] = sent.json().message_ids;
  await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: device.id })), now: new Date() });
  // The first message is never reported about, so a claim always finds one and never waits.
  for (const id of ids.slice(1)) messages.add(id);
});
afterAll(async () => {
  await api?.close();
});

const SMS_URLS = [
  'https://hooks.example/sms',
  'http://hooks.example:8080/a?b=c',
  'https://internal.example/',
  'https://nowhere.example/',
  'http://127.0.0.1/',
  'http://[::1]/',
  'ftp://hooks.example/',
  'https://user:pass@hooks.example/',
  `https://hooks.example/${'a'.repeat(2001)}`,
  '',
  'not a url',
];

describe('devices routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const id = pathId(devices).map((id) => `/api/v1/devices/${id}`);
    const name = fc.string({ minLength: 1, maxLength: 40 });
    const smsUrl = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...SMS_URLS) },
      { weight: 2, arbitrary: fc.webUrl({ withQueryParameters: true }) },
      { weight: 1, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: hostileString },
    );
    const sims = fc.array(
      shaped({ sim_number: fc.integer({ min: -1, max: 4 }), twilio_sms_url: smsUrl, segments_per_day: fc.integer({ min: -1, max: 1000 }) }),
      { maxLength: 4 },
    );
    const requests = fc.oneof(
      route({ method: 'POST', path: '/api/v1/devices', body: shaped({ name }), headers: owner, creates: devices }),
      route({ method: 'GET', path: '/api/v1/devices', headers: owner }),
      route({ method: 'GET', path: id, headers: owner }),
      route({ method: 'PATCH', path: id, body: shaped({ name, enabled: fc.boolean() }), headers: owner }),
      route({ method: 'PATCH', path: id, body: shaped({ twilio_sms_url: smsUrl, sims }), headers: owner }),
      route({ method: 'GET', path: '/api/v1/twilio/sms-deliveries', query: { limit: plausible.limit, offset: plausible.offset }, headers: owner }),
      route({ method: 'DELETE', path: id, headers: owner }),
      route({ method: 'POST', path: '/api/v1/device-pairings', body: shaped({ name }), headers: owner }),
    );
    await fuzz(api, requests, { numRuns: 200 });
  });
});

/** Mostly the device's token; now and then a malformed, foreign or hostile credential. */
const deviceAuth = () =>
  mostly<Record<string, string>>(
    fc.constant({ authorization: `Bearer ${device.token}` }),
    fc.constantFrom<Record<string, string>>(
      {},
      { authorization: `bearer   ${device.token}  ` },
      { authorization: `Bearer ${device.token}x` },
      { authorization: `Bearer ${device.token} ${device.token}` },
      { authorization: 'Bearer ' },
      { authorization: `Basic ${device.token}` },
      { 'x-api-key': device.token },
    ),
    headerValue.map((value) => ({ authorization: `Bearer ${value}` })),
    headerValue.map((value) => ({ authorization: value })),
  );

describe('native device protocol under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const messageId = mostly(messages.arbitrary(), fc.uuid(), hostileString);
    const report = shaped({
      id: messageId,
      status: fc.constantFrom('sending', 'sent', 'delivered', 'failed'),
      error: fc.string({ maxLength: 40 }),
      at: plausible.isoDate,
    });
    const inbound = shaped({
      id: fc.string({ minLength: 1, maxLength: 20 }),
      from: mostly(plausible.phone, fc.string({ minLength: 1, maxLength: 64 })),
      to: plausible.phone,
      message: fc.string({ maxLength: 80 }),
      received_at: plausible.isoDate,
      sim_number: fc.integer({ min: 1, max: 8 }),
    });
    const requests = fc.oneof(
      // `wait` is only ever 0 or invalid: a valid wait on an empty device would hold the request open.
      route({
        method: 'GET',
        path: '/api/v1/device/messages',
        query: { limit: plausible.limit, wait: mostly(fc.constant('0'), fc.constantFrom('-1', '61', 'x', '')) },
        headers: deviceAuth(),
      }),
      route({
        method: 'POST',
        path: '/api/v1/device/reports',
        body: shaped({ reports: fc.array(report, { minLength: 1, maxLength: 4 }) }),
        headers: deviceAuth(),
      }),
      route({
        method: 'POST',
        path: '/api/v1/device/inbound',
        body: shaped({ messages: fc.array(inbound, { minLength: 1, maxLength: 3 }) }),
        headers: deviceAuth(),
      }),
      route({ method: 'POST', path: '/api/v1/device/heartbeat', headers: deviceAuth() }),
    );
    await fuzz(api, requests, { numRuns: 300 });
  });
});
