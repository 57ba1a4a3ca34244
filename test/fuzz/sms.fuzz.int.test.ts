/**
 * Fuzz of sending (`/api/sms/send`, `/api/sms/send-template`, with Idempotency-Key) and reading
 * (`/api/v1/sms`, received SMS, quota): never a 5xx, every 4xx `{error, message}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS_FILTER_VALUES } from '@smsgw/core';
import { call, createTestUser, send, uniquePhone } from '@smsgw/api/testing';
import { headerValue, hostileString, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';

let api: FuzzApi;
let headers: ReturnType<typeof userAuth>;
let deviceId: string;
let templateId: string;
const groupIds: string[] = [];
const messageIds: string[] = [];
const batchIds: string[] = [];
const receivedIds: string[] = [];

beforeAll(async () => {
  api = await startFuzzApi();
  const user = await createTestUser(api.db);
  headers = userAuth(user.apiKey, api.config.JWT_SECRET);
  deviceId = user.deviceId!;
  const group = await call(api.app, user.apiKey, 'POST', '/api/v1/groups', { name: 'friends' });
  groupIds.push(group.json().id);
  await call(api.app, user.apiKey, 'POST', `/api/v1/groups/${groupIds[0]}/members`, { phones: [uniquePhone(), uniquePhone()] });
  const template = await call(api.app, user.apiKey, 'POST', '/api/v1/templates', { name: 't', body: 'Hi {{name}}, code {{code}} for {{phone}}' });
  templateId = template.json().id;
  for (const recipients of [[uniquePhone()], [uniquePhone(), uniquePhone()]]) {
    const res = await send(api.app, user.apiKey, { recipients, body: 'seed' });
    expect(res.statusCode).toBe(200);
    messageIds.push(...res.json().message_ids);
    if (res.json().batch_id) batchIds.push(res.json().batch_id);
  }
  const inbound = await api.app.inject({
    method: 'POST',
    url: '/api/v1/device/inbound',
    headers: { authorization: `Bearer ${user.devices[0]!.token}` },
    payload: { messages: [{ id: 'seed', from: '+15550001111', message: 'hello', received_at: new Date().toISOString() }] },
  });
  expect(inbound.statusCode).toBe(202);
  const received = await call(api.app, user.apiKey, 'GET', '/api/v1/sms/received');
  receivedIds.push(...received.json().data.map((r: { id: string }) => r.id));
});
afterAll(async () => {
  await api?.close();
});

const recipients = fc.array(plausible.phone, { minLength: 1, maxLength: 3 });
const text = fc.oneof(fc.string({ minLength: 1, maxLength: 60 }), fc.constantFrom('x'.repeat(1600), '€'.repeat(1601), '😀'.repeat(800), '😀'.repeat(801)));
// A small pool, so that keys are replayed, and now and then with another body.
const idempotencyKey = fc.oneof(fc.constantFrom('key-1', 'key-2', 'key-3'), fc.uuid(), headerValue);

describe('sending routes under random and hostile input', () => {
  it('answer every send below 500, and every 4xx as {error, message}', async () => {
    const ids = (pool: string[]) => fc.array(mostly(fc.constantFrom(...pool), fc.uuid(), hostileString), { maxLength: 2 });
    const devices = mostly(fc.constant(deviceId), fc.uuid(), hostileString);
    const requests = fc.oneof(
      route({
        method: 'POST',
        path: '/api/sms/send',
        body: shaped({ recipients, body: text, device_id: devices, group_ids: ids(groupIds) }),
        headers,
        optionalHeaders: { 'idempotency-key': idempotencyKey },
      }),
      route({
        method: 'POST',
        path: '/api/sms/send-template',
        body: shaped({
          recipients,
          template_id: mostly(fc.constant(templateId), fc.uuid(), hostileString),
          variables: fc.dictionary(fc.constantFrom('code', 'name', 'phone', 'other'), fc.string({ maxLength: 20 })),
          device_id: devices,
          group_ids: ids(groupIds),
        }),
        headers,
        optionalHeaders: { 'idempotency-key': idempotencyKey },
      }),
    );
    await fuzz(api, requests, { numRuns: 300 });
  });
});

describe('reading routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const pages = { limit: plausible.limit, offset: plausible.offset };
    const uuidOf = (pool: string[]) => fc.oneof(fc.constantFrom(...pool), fc.uuid());
    const requests = fc.oneof(
      route({
        method: 'GET',
        path: '/api/v1/sms',
        query: { status: fc.constantFrom(...STATUS_FILTER_VALUES), to: plausible.phone, batch_id: uuidOf(batchIds), device_id: uuidOf([deviceId]), ...pages },
        headers,
      }),
      route({ method: 'GET', path: pathId(messageIds).map((id) => `/api/v1/sms/${id}`), headers }),
      route({ method: 'GET', path: '/api/v1/sms/received', query: { from: plausible.phone, device_id: uuidOf([deviceId]), ...pages }, headers }),
      route({ method: 'GET', path: pathId(receivedIds).map((id) => `/api/v1/sms/received/${id}`), headers }),
      route({ method: 'GET', path: fc.constantFrom('/api/v1/quota', '/api/plans/quota'), headers }),
      // Methods the routes do not have, or that Fastify answers for them (HEAD of a GET).
      ...(['PUT', 'HEAD', 'OPTIONS', 'DELETE'] as const).map((method) =>
        route({ method, path: fc.constantFrom('/api/sms/send', '/api/v1/sms', '/api/v1/sms/received', `/api/v1/sms/${messageIds[0]}`, '/nowhere'), headers }),
      ),
    );
    await fuzz(api, requests, { numRuns: 250 });
  });
});
