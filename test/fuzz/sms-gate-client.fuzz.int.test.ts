/**
 * Fuzz of SMS Gate's client API (`/3rdparty/v1`): sending, reading, listing, cancelling, devices,
 * health, the login check and tokens (issue, refresh, revoke), with Basic and Bearer credentials
 * and scoped tokens, hostile or not: never a 5xx, every 4xx upstream's `{message}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestUser } from '@smsgw/api/testing';
import { hostileString, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';
import { IdPool } from './arbitraries.ts';

let api: FuzzApi;
let headers: fc.Arbitrary<Record<string, string>>;
let deviceId: string;
const messageIds = new IdPool(['seed-1']);
const tokenIds = new IdPool([]);
const SCOPES = ['messages:send', 'messages:read', 'messages:list', 'messages:cancel', 'devices:list', 'devices:delete', 'tokens:manage', 'all:any', 'tokens:refresh'];
const deviceIds: string[] = [];

beforeAll(async () => {
  api = await startFuzzApi({ PHONE_DEFAULT_REGION: 'DE' });
  const user = await createTestUser(api.db, { devices: 3 });
  deviceId = user.deviceId!;
  deviceIds.push(...user.devices.map((d) => d.id));
  const basic = (login: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` });
  // Scoped tokens, their refresh tokens (spent as the fuzz refreshes them) and a revoked pair.
  const issue = async (scopes: string[]) => {
    const res = await api.app.inject({ method: 'POST', url: '/3rdparty/v1/auth/token', headers: { authorization: `Bearer ${user.apiKey}` }, payload: { scopes } });
    if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
    const pair = res.json() as { id: string; access_token: string; refresh_token: string };
    tokenIds.add(pair.id);
    return pair;
  };
  const pairs = await Promise.all([['messages:send', 'messages:read'], ['tokens:manage', 'devices:list'], ['all:any'], ['messages:list', 'messages:cancel']].map(issue));
  const revoked = await issue(['all:any']);
  await api.app.inject({ method: 'DELETE', url: `/3rdparty/v1/auth/token/${revoked.id}`, headers: { authorization: `Bearer ${user.apiKey}` } });
  const tokens = [...pairs, revoked].flatMap((p) => [p.access_token, p.refresh_token]);
  headers = mostly<Record<string, string>>(
    fc.constantFrom(basic(user.user.name, user.apiKey), basic(user.userId, user.apiKey), { authorization: `Bearer ${user.apiKey}` }),
    fc.constantFrom(...tokens).map((token) => ({ authorization: `Bearer ${token}` })),
    fc.constantFrom(...tokens).map((token) => basic(user.user.name, token)),
    userAuth(user.apiKey, api.config.JWT_SECRET),
    fc.constantFrom(basic('', user.apiKey), basic(user.user.name, ''), basic('nobody', user.apiKey), { authorization: 'Basic' }, { authorization: 'Basic ===' }),
    fc.tuple(hostileString, hostileString).map(([login, password]) => basic(login, password)),
  );
  const seed = await api.app.inject({
    method: 'POST', url: '/3rdparty/v1/messages', headers: { authorization: `Bearer ${user.apiKey}` }, payload: { id: 'seed-1', message: 'seed', phoneNumbers: ['+15550001000'] },
  });
  if (seed.statusCode !== 202) throw new Error(`seed send: ${seed.statusCode} ${seed.body}`);
});
afterAll(async () => {
  await api?.close();
});

const numbers = fc.array(fc.oneof(plausible.phone, fc.constantFrom('0151 23456789', '015123456789', '+49 (151) 2345-6789', '12', 'abc')), { minLength: 1, maxLength: 4 });
const date = fc.oneof(plausible.isoDate, fc.integer({ min: 10, max: 100_000 }).map((s) => new Date(Date.now() + s * 1000).toISOString()));

describe('SMS Gate client API under random and hostile input', () => {
  it('answers every request below 500, and every 4xx as {message}', async () => {
    const message = shaped({
      id: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 })),
      deviceId: mostly(fc.constant(deviceId), fc.uuid(), hostileString),
      message: fc.string({ maxLength: 80 }),
      textMessage: fc.record({ text: fc.string({ maxLength: 80 }) }),
      dataMessage: fc.record({ data: fc.base64String(), port: fc.integer() }),
      phoneNumbers: numbers,
      isEncrypted: fc.boolean(),
      simNumber: fc.integer({ min: 0, max: 4 }),
      withDeliveryReport: fc.boolean(),
      priority: fc.integer({ min: -130, max: 130 }),
      ttl: fc.integer({ min: -5, max: 100_000 }),
      validUntil: date,
      scheduleAt: date,
    });
    const sendPath = fc.constantFrom('/3rdparty/v1/messages', '/3rdparty/v1/message');
    const idPath = (base: string) => pathId(messageIds).map((id) => `${base}/${id}`);
    // Sends that should mostly be accepted, so that reading and cancelling meet real messages too.
    const plausibleSend = fc.record(
      {
        id: fc.uuid(), textMessage: fc.record({ text: fc.string({ minLength: 1, maxLength: 40 }) }),
        phoneNumbers: fc.uniqueArray(fc.oneof(plausible.phone, fc.constant('0151 23456789')), { minLength: 1, maxLength: 3 }),
        priority: fc.integer({ min: -128, max: 127 }), withDeliveryReport: fc.boolean(), scheduleAt: fc.integer({ min: 60, max: 3600 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
      },
      { requiredKeys: ['textMessage', 'phoneNumbers'] },
    );
    const requests = fc.oneof(
      route({ method: 'POST', path: sendPath, body: plausibleSend, headers, creates: messageIds }),
      route({ method: 'POST', path: sendPath, query: { skipPhoneValidation: fc.constantFrom('true', 'false'), deviceActiveWithin: fc.constantFrom('0', '12') }, body: message, headers }),
      route({
        method: 'GET',
        path: fc.constantFrom('/3rdparty/v1/messages', '/3rdparty/v1/message'),
        query: {
          from: plausible.isoDate, to: plausible.isoDate, state: fc.constantFrom('Pending', 'Processed', 'Sent', 'Delivered', 'Failed', 'Cancelling', 'Cancelled'),
          deviceId: fc.oneof(fc.constant(deviceId), fc.uuid()), limit: plausible.limit, offset: plausible.offset, includeContent: fc.constantFrom('true', 'false'),
          sort: fc.constantFrom('created_at', '-created_at'),
        },
        headers,
      }),
      route({ method: 'GET', path: fc.oneof(idPath('/3rdparty/v1/messages'), idPath('/3rdparty/v1/message')), headers }),
      route({ method: 'DELETE', path: fc.oneof(idPath('/3rdparty/v1/messages'), idPath('/3rdparty/v1/message')), headers }),
      route({ method: 'GET', path: fc.constantFrom('/3rdparty/v1/devices', '/3rdparty/v1/device', '/3rdparty/v1/', '/3rdparty/v1', '/3rdparty/v1/health'), headers }),
      route({ method: 'DELETE', path: pathId(deviceIds.slice(1)).map((id) => `/3rdparty/v1/devices/${id}`), headers }),
      route({
        method: 'POST',
        path: '/3rdparty/v1/auth/token',
        body: shaped({ scopes: fc.array(fc.oneof(fc.constantFrom(...SCOPES), hostileString), { maxLength: 4 }), ttl: fc.integer({ min: -5, max: 100_000 }) }),
        headers,
        creates: tokenIds,
      }),
      route({ method: 'POST', path: '/3rdparty/v1/auth/token/refresh', headers }),
      route({ method: 'DELETE', path: pathId(tokenIds).map((id) => `/3rdparty/v1/auth/token/${id}`), headers }),
      ...(['PUT', 'HEAD', 'OPTIONS', 'PATCH'] as const).map((method) =>
        route({ method, path: fc.constantFrom('/3rdparty/v1/messages', '/3rdparty/v1/devices', '/3rdparty/v1/nowhere', '/3rdparty/v1/messages/seed-1'), headers }),
      ),
    );
    await fuzz(api, requests, { numRuns: 400 });
  });
});
