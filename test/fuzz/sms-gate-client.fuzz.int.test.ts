/**
 * Fuzz of SMS Gate's client API (`/3rdparty/v1`): sending (plain and encrypted), reading, listing,
 * cancelling, devices, health, the login check, tokens (issue, refresh, revoke), the inbox and its
 * refresh, settings, logs and webhooks (register, list, delete), with Basic and Bearer credentials
 * and scoped tokens, hostile or not: never a 5xx, every 4xx upstream's `{message}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestUser } from '@smsgw/api/testing';
import { createDevice } from '@smsgw/db';
import { hostileString, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';
import { IdPool } from './arbitraries.ts';

let api: FuzzApi;
let headers: fc.Arbitrary<Record<string, string>>;
let deviceId: string;
/** The user's SMS Gate phone (never deleted by the fuzz): encrypted sends may go to it. */
let phoneId: string;
const messageIds = new IdPool(['seed-1']);
const tokenIds = new IdPool([]);
const webhookIds = new IdPool(['hook-1']);
const SCOPES = [
  'messages:send',
  'messages:read',
  'messages:list',
  'messages:cancel',
  'devices:list',
  'devices:delete',
  'tokens:manage',
  'all:any',
  'tokens:refresh',
  'inbox:list',
  'settings:read',
  'settings:write',
  'logs:read',
  'webhooks:list',
  'webhooks:write',
  'webhooks:delete',
  'inbox:refresh',
];
const EVENTS = ['sms:received', 'sms:sent', 'sms:delivered', 'sms:failed', 'sms:cancelled', 'system:ping', 'sms:data-received', 'mms:received', 'app:started'];
const deviceIds: string[] = [];

beforeAll(async () => {
  // Webhook hosts resolve to one public address (no DNS here).
  api = await startFuzzApi({ PHONE_DEFAULT_REGION: 'DE' }, { webhookResolver: async () => ['93.184.215.14'] });
  const user = await createTestUser(api.db, { devices: 3 });
  deviceId = user.deviceId!;
  deviceIds.push(...user.devices.map((d) => d.id));
  const { device: phone } = await createDevice(api.db, { userId: user.userId, name: 'gate' });
  await api.db.device.update({ where: { id: phone.id }, data: { protocol: 'sms_gate', lastSeenAt: new Date() } });
  phoneId = phone.id;
  const basic = (login: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` });
  // Scoped tokens, their refresh tokens (spent as the fuzz refreshes them) and a revoked pair.
  const issue = async (scopes: string[]) => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/3rdparty/v1/auth/token',
      headers: { authorization: `Bearer ${user.apiKey}` },
      payload: { scopes },
    });
    if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
    const pair = res.json() as { id: string; access_token: string; refresh_token: string };
    tokenIds.add(pair.id);
    return pair;
  };
  const pairs = await Promise.all(
    [
      ['messages:send', 'messages:read'],
      ['tokens:manage', 'devices:list'],
      ['all:any'],
      ['messages:list', 'messages:cancel'],
      ['settings:read', 'inbox:list'],
      ['settings:write', 'logs:read'],
      ['webhooks:list', 'webhooks:write'],
      ['webhooks:delete', 'inbox:refresh'],
    ].map(issue),
  );
  const revoked = await issue(['all:any']);
  await api.app.inject({ method: 'DELETE', url: `/3rdparty/v1/auth/token/${revoked.id}`, headers: { authorization: `Bearer ${user.apiKey}` } });
  const tokens = [...pairs, revoked].flatMap((p) => [p.access_token, p.refresh_token]);
  headers = mostly<Record<string, string>>(
    fc.constantFrom(basic(user.user.name, user.apiKey), basic(user.userId, user.apiKey), { authorization: `Bearer ${user.apiKey}` }),
    fc.constantFrom(...tokens).map((token) => ({ authorization: `Bearer ${token}` })),
    fc.constantFrom(...tokens).map((token) => basic(user.user.name, token)),
    userAuth(user.apiKey, api.config.JWT_SECRET),
    fc.constantFrom(
      basic('', user.apiKey),
      basic(user.user.name, ''),
      basic('nobody', user.apiKey),
      { authorization: 'Basic' },
      { authorization: 'Basic ===' },
    ),
    fc.tuple(hostileString, hostileString).map(([login, password]) => basic(login, password)),
  );
  const seed = await api.app.inject({
    method: 'POST',
    url: '/3rdparty/v1/messages',
    headers: { authorization: `Bearer ${user.apiKey}` },
    payload: { id: 'seed-1', message: 'seed', phoneNumbers: ['+15550001000'] },
  });
  if (seed.statusCode !== 202) throw new Error(`seed send: ${seed.statusCode} ${seed.body}`);
  const hook = await api.app.inject({
    method: 'POST',
    url: '/3rdparty/v1/webhooks',
    headers: { authorization: `Bearer ${user.apiKey}` },
    payload: { id: 'hook-1', url: 'https://hooks.example.org/sms', event: 'sms:received' },
  });
  if (hook.statusCode !== 201) throw new Error(`seed webhook: ${hook.statusCode} ${hook.body}`);
});
afterAll(async () => {
  await api?.close();
});

/** SMS Gate ciphertexts as the clients make them (`$aes-256-cbc/pbkdf2-sha1$i=…$salt$data`), and broken ones. */
const base64 = fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const ciphertext = fc.tuple(fc.integer({ min: 1, max: 2_000_000 }), base64, base64).map(([i, salt, data]) => `$aes-256-cbc/pbkdf2-sha1$i=${i}$${salt}$${data}`);
const brokenCiphertext = fc.oneof(
  fc.tuple(hostileString, base64, base64).map(([params, salt, data]) => `$aes-256-cbc/pbkdf2-sha1$${params}$${salt}$${data}`),
  fc
    .tuple(fc.constantFrom('aes-256-cbc/pbkdf2-sha1', 'rsa-oaep-aes-256-gcm', ''), hostileString, hostileString)
    .map(([format, a, b]) => `$${format}$i=1$${a}$${b}`),
  fc.array(fc.constantFrom('$', 'i=1', 'aes-256-cbc/pbkdf2-sha1', 'c2FsdA==', ','), { maxLength: 8 }).map((parts) => parts.join('')),
);
const sealed = mostly(ciphertext, brokenCiphertext, hostileString);
const numbers = fc.array(fc.oneof(plausible.phone, fc.constantFrom('0151 23456789', '015123456789', '+49 (151) 2345-6789', '12', 'abc'), sealed), {
  minLength: 1,
  maxLength: 4,
});
const date = fc.oneof(
  plausible.isoDate,
  fc.integer({ min: 10, max: 100_000 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
);

// SMS Gate's DeviceSettings, in both spellings, with values around every bound.
const count = mostly<unknown>(fc.integer({ min: 1, max: 100 }), fc.integer({ min: -2, max: 3_000_000_000 }), fc.double(), fc.constantFrom('10', null));
const clock = fc.constantFrom('00:00', '23:59', '08:30', '24:00', '8:00', '', null);
const settings = shaped({
  messages: shaped({
    limit_period: fc.constantFrom('Disabled', 'PerMinute', 'Per30Minutes', 'PerHour', 'PerDay', 'PerWeek', null),
    limit_value: count,
    limitValue: count,
    send_interval_min: count,
    send_interval_max: count,
    sendIntervalMax: count,
    sim_selection_mode: fc.constantFrom('OSDefault', 'RoundRobin', 'Random', 'First'),
    processing_order: fc.constantFrom('LIFO', 'FIFO', 'lifo'),
    log_lifetime_days: count,
    work_hours_enabled: fc.boolean(),
    work_hours_start: clock,
    work_hours_end: clock,
  }),
  ping: shaped({ interval_seconds: count }),
  logs: shaped({ lifetime_days: count }),
  receiver: shaped({ content_provider_enabled: fc.boolean() }),
  gateway: shaped({
    notification_channel: fc.constantFrom('AUTO', 'SSE_ONLY', 'FCM'),
    cloud_url: mostly(fc.constant(null), fc.constant('https://example.com')),
    private_token: mostly(fc.constant(null), fc.constant('t')),
  }),
  encryption: shaped({ passphrase: mostly(fc.constant(null), fc.constant('secret')) }),
  webhooks: shaped({
    signing_key: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)),
    signingKey: fc.string({ maxLength: 20 }),
    retry_count: count,
    internet_required: fc.boolean(),
  }),
});

describe('SMS Gate client API under random and hostile input', () => {
  it('answers every request below 500, and every 4xx as {message}', async () => {
    const message = shaped({
      id: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 })),
      deviceId: mostly(fc.constant(deviceId), fc.uuid(), hostileString),
      message: fc.oneof(fc.string({ maxLength: 80 }), sealed),
      textMessage: fc.record({ text: fc.oneof(fc.string({ maxLength: 80 }), sealed) }),
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
        id: fc.uuid(),
        textMessage: fc.record({ text: fc.string({ minLength: 1, maxLength: 40 }) }),
        phoneNumbers: fc.uniqueArray(fc.oneof(plausible.phone, fc.constant('0151 23456789')), { minLength: 1, maxLength: 3 }),
        priority: fc.integer({ min: -128, max: 127 }),
        withDeliveryReport: fc.boolean(),
        scheduleAt: fc.integer({ min: 60, max: 3600 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
      },
      { requiredKeys: ['textMessage', 'phoneNumbers'] },
    );
    // Encrypted sends that should mostly be accepted: to the SMS Gate phone (named or not), else refused (a native device named).
    const encryptedSend = fc.record(
      {
        id: fc.uuid(),
        textMessage: fc.record({ text: sealed }),
        phoneNumbers: fc.uniqueArray(sealed, { minLength: 1, maxLength: 3 }),
        isEncrypted: fc.constant(true),
        deviceId: fc.constantFrom(phoneId, deviceId),
        simNumber: fc.integer({ min: 1, max: 3 }),
        priority: fc.integer({ min: -128, max: 127 }),
        scheduleAt: fc.integer({ min: 60, max: 3600 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
      },
      { requiredKeys: ['textMessage', 'phoneNumbers', 'isEncrypted'] },
    );
    const requests = fc.oneof(
      route({ method: 'POST', path: sendPath, body: plausibleSend, headers, creates: messageIds }),
      route({ method: 'POST', path: sendPath, body: encryptedSend, headers, creates: messageIds }),
      route({
        method: 'POST',
        path: sendPath,
        query: { skipPhoneValidation: fc.constantFrom('true', 'false'), deviceActiveWithin: fc.constantFrom('0', '12') },
        body: message,
        headers,
      }),
      route({
        method: 'GET',
        path: fc.constantFrom('/3rdparty/v1/messages', '/3rdparty/v1/message'),
        query: {
          from: plausible.isoDate,
          to: plausible.isoDate,
          state: fc.constantFrom('Pending', 'Processed', 'Sent', 'Delivered', 'Failed', 'Cancelling', 'Cancelled'),
          deviceId: fc.oneof(fc.constant(deviceId), fc.uuid()),
          limit: plausible.limit,
          offset: plausible.offset,
          includeContent: fc.constantFrom('true', 'false'),
          sort: fc.constantFrom('created_at', '-created_at'),
        },
        headers,
      }),
      route({ method: 'GET', path: fc.oneof(idPath('/3rdparty/v1/messages'), idPath('/3rdparty/v1/message')), headers }),
      route({ method: 'DELETE', path: fc.oneof(idPath('/3rdparty/v1/messages'), idPath('/3rdparty/v1/message')), headers }),
      route({
        method: 'GET',
        path: fc.constantFrom('/3rdparty/v1/devices', '/3rdparty/v1/device', '/3rdparty/v1/', '/3rdparty/v1', '/3rdparty/v1/health'),
        headers,
      }),
      route({ method: 'DELETE', path: pathId(deviceIds.slice(1)).map((id) => `/3rdparty/v1/devices/${id}`), headers }),
      route({
        method: 'POST',
        path: '/3rdparty/v1/auth/token',
        body: shaped({ scopes: fc.array(fc.oneof(fc.constantFrom(...SCOPES), hostileString), { maxLength: 4 }), ttl: fc.integer({ min: -5, max: 100_000 }) }),
        headers,
        creates: tokenIds,
      }),
      route({ method: 'POST', path: '/3rdparty/v1/auth/token/refresh', headers }),
      route({
        method: 'GET',
        path: '/3rdparty/v1/inbox',
        query: {
          type: fc.constantFrom('SMS', 'DATA_SMS', 'MMS', 'MMS_DOWNLOADED', 'sms'),
          limit: fc.constantFrom('1', '50', '500', '501', '0'),
          offset: plausible.offset,
          from: plausible.isoDate,
          to: plausible.isoDate,
          deviceId: fc.oneof(fc.constant(deviceId), fc.uuid()),
          includeAttachments: fc.constantFrom('true', 'false'),
        },
        headers,
      }),
      route({
        method: 'GET',
        path: fc.constantFrom('/3rdparty/v1/settings', '/3rdparty/v1/logs'),
        query: { from: plausible.isoDate, to: plausible.isoDate },
        headers,
      }),
      route({ method: 'PUT', path: '/3rdparty/v1/settings', body: settings, headers }),
      route({ method: 'PATCH', path: '/3rdparty/v1/settings', body: settings, headers }),
      route({ method: 'DELETE', path: pathId(tokenIds).map((id) => `/3rdparty/v1/auth/token/${id}`), headers }),
      route({
        method: 'POST',
        path: '/3rdparty/v1/webhooks',
        body: shaped({
          id: fc.oneof(pathId(webhookIds), fc.string({ maxLength: 40 })),
          deviceId: mostly(fc.constant(deviceId), fc.constant(null), fc.uuid(), hostileString),
          url: mostly(
            fc.constantFrom('https://hooks.example.org/sms', 'http://hooks.example.org/in?k=1'),
            fc.constantFrom('http://127.0.0.1/x', 'ftp://h/x', ''),
            hostileString,
          ),
          event: mostly(fc.constantFrom(...EVENTS), hostileString),
        }),
        headers,
        creates: webhookIds,
      }),
      route({ method: 'GET', path: '/3rdparty/v1/webhooks', headers }),
      route({ method: 'DELETE', path: pathId(webhookIds).map((id) => `/3rdparty/v1/webhooks/${id}`), headers }),
      route({
        method: 'POST',
        path: '/3rdparty/v1/inbox/refresh',
        body: shaped({
          deviceId: mostly(fc.constant(deviceId), fc.uuid(), hostileString),
          since: date,
          until: date,
          messageTypes: fc.array(mostly(fc.constantFrom('SMS', 'MMS', 'DATA_SMS'), hostileString), { maxLength: 3 }),
          triggerWebhooks: fc.boolean(),
          webhookDelivery: mostly(fc.constantFrom('Disabled', 'Individual', 'Batch'), hostileString),
        }),
        headers,
      }),
      ...(['PUT', 'HEAD', 'OPTIONS', 'PATCH'] as const).map((method) =>
        route({
          method,
          path: fc.constantFrom(
            '/3rdparty/v1/messages',
            '/3rdparty/v1/devices',
            '/3rdparty/v1/webhooks',
            '/3rdparty/v1/nowhere',
            '/3rdparty/v1/messages/seed-1',
            '/3rdparty/v1/inbox',
            '/3rdparty/v1/logs',
          ),
          headers,
        }),
      ),
    );
    await fuzz(api, requests, { numRuns: 500 });
  });
});
