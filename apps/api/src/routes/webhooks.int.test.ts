import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { TEST_EVENT_TYPE } from '@smsgw/core';
import { PREVIOUS_SECRET_VALIDITY_MS } from '@smsgw/db';
import { MAX_WEBHOOKS } from './webhooks.ts';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { ISO, NOT_FOUND, URL_OK, routesOf, stubResolver, webhookRequests, withoutSecret } from '../testing/webhook-requests.ts';

/** /api/v1/webhooks: endpoints, their validation, secrets, limit and isolation (test events and targets: webhook-deliveries.int.test.ts). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: stubResolver });
});
afterAll(async () => {
  await api?.close();
});
const { createWebhook, sendTest } = webhookRequests(() => api);

describe('webhook endpoints CRUD', () => {
  it('creates an endpoint with 201, showing its whsec_ secret once, and keeps the secret out of every read', async () => {
    const { apiKey, userId } = await createTestUser(api.db);

    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: URL_OK, events: ['message.delivered'], description: 'CRM' });

    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String),
      url: URL_OK,
      events: ['message.delivered'],
      description: 'CRM',
      enabled: true,
      disabled_reason: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({ userId, secret: created.secret, previousSecret: null });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${created.id}`)).json()).toEqual(withoutSecret(created));
    expect((await call(api.app, apiKey, 'GET', '/api/v1/webhooks')).json().data).toEqual([withoutSecret(created)]);
    const patched = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${created.id}`, { description: 'x' });
    expect(patched.json()).not.toHaveProperty('secret');
  });

  it('gives each endpoint its own secret and a null description when none is given', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createWebhook(apiKey);
    const b = await createWebhook(apiKey);
    expect(a.secret).not.toBe(b.secret);
    expect(a.description).toBeNull();
  });

  it('gets an endpoint by id, and lists endpoints newest first with pagination', async () => {
    const { apiKey } = await createTestUser(api.db);
    const [a, b, c] = [withoutSecret(await createWebhook(apiKey)), withoutSecret(await createWebhook(apiKey)), withoutSecret(await createWebhook(apiKey))];

    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${b.id}`)).json()).toEqual(b);
    expect((await call(api.app, apiKey, 'GET', '/api/v1/webhooks')).json()).toEqual({ data: [c, b, a], total: 3, limit: 20, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/webhooks?limit=1&offset=2')).json()).toEqual({ data: [a], total: 3, limit: 1, offset: 2 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/webhooks?limit=0')).statusCode).toBe(400);
  });

  it('changes url, events and description, removes the description with null, and keeps the rest', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey, { description: 'before' });

    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { url: 'https://other.example/in', events: ['message.failed'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...withoutSecret(w), url: 'https://other.example/in', events: ['message.failed'], updated_at: expect.stringMatching(ISO) });
    const cleared = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { description: null });
    expect(cleared.json()).toMatchObject({ description: null, url: 'https://other.example/in' });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${w.id}`)).json()).toEqual(cleared.json());
  });

  it('disables an endpoint with no reason, and enabling an endpoint smsgw disabled clears the reason', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const disabled = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { enabled: false });
    expect(disabled.json()).toMatchObject({ enabled: false, disabled_reason: null });

    await api.db.webhook.update({ where: { id: w.id }, data: { disabledReason: 'The endpoint answered 410 Gone.' } });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${w.id}`)).json()).toMatchObject({
      enabled: false,
      disabled_reason: 'The endpoint answered 410 Gone.',
    });
    const enabled = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('deletes an endpoint with 204 and its deliveries with it, after which every route is 404', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const delivery = await sendTest(apiKey, w.id);

    expect((await call(api.app, apiKey, 'DELETE', `/api/v1/webhooks/${w.id}`)).statusCode).toBe(204);
    expect(await api.db.webhookDelivery.count({ where: { webhookId: w.id } })).toBe(0);
    for (const [method, url, payload] of routesOf(w.id, delivery.id)) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 404, body: NOT_FOUND });
    }
  });

  it.each([
    ['an id that does not exist', () => randomUUID()],
    ['a malformed id', () => 'xyz'],
  ])('answers 404 not_found for %s on every route', async (_what, id) => {
    const { apiKey } = await createTestUser(api.db);
    for (const [method, url, payload] of routesOf(id())) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 404, body: NOT_FOUND });
    }
  });
});

describe('webhook validation', () => {
  it.each([
    ['no events', { url: URL_OK }],
    ['an empty event list', { url: URL_OK, events: [] }],
    ['an unknown event', { url: URL_OK, events: ['message.read'] }],
    ['the test event', { url: URL_OK, events: [TEST_EVENT_TYPE] }],
    ['the same event twice', { url: URL_OK, events: ['message.sent', 'message.sent'] }],
    ['events that are not a list', { url: URL_OK, events: 'message.sent' }],
    ['no url', { events: ['message.sent'] }],
    ['an empty url', { url: '', events: ['message.sent'] }],
    ['an unknown field', { url: URL_OK, events: ['message.sent'], secret: 'whsec_mine' }],
    ['a description over 500 characters', { url: URL_OK, events: ['message.sent'], description: 'd'.repeat(501) }],
  ])('refuses %s on create with 400 invalid_request', async (_what, payload) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(await api.db.webhook.count({ where: { userId } })).toBe(0);
  });

  it.each([
    ['ftp://hooks.example/in', 'http or https'],
    ['javascript:alert(1)', 'http or https'],
    ['file:///etc/passwd', 'http or https'],
    ['https://user:pass@hooks.example/in', 'user name or password'],
    ['https://user@hooks.example/in', 'user name or password'],
    [`https://hooks.example/${'a'.repeat(2000)}`, 'longer than 2000'],
    ['hooks.example/in', 'not a valid absolute URL'],
  ])('refuses the URL %s on create with 400 invalid_webhook_url saying why', async (url, why) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url, events: ['message.sent'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_webhook_url', message: expect.stringContaining(why) });
    expect(await api.db.webhook.count({ where: { userId } })).toBe(0);
  });

  it('refuses an empty patch, an unknown field, empty events and a bad URL on patch, and leaves the endpoint unchanged', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    for (const [payload, error] of [
      [{}, 'invalid_request'],
      [{ secret: 'whsec_x' }, 'invalid_request'],
      [{ events: [] }, 'invalid_request'],
      [{ enabled: 'yes' }, 'invalid_request'],
      [{ url: 'ftp://hooks.example/' }, 'invalid_webhook_url'],
      [{ url: 'http://internal.example/' }, 'invalid_webhook_url'],
    ] as const) {
      const res = await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, payload);
      expect({ payload, status: res.statusCode, error: res.json().error }).toEqual({ payload, status: 400, error });
    }
    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${w.id}`)).json()).toEqual(withoutSecret(w));
  });
});

describe('webhook secret rotation', () => {
  it('gives a new secret and keeps the previous one valid for 24 hours', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);

    const before = Date.now();
    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/rotate-secret`);

    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated).toEqual({ id: w.id, secret: expect.stringMatching(/^whsec_/), previous_secret_expires_at: expect.stringMatching(ISO) });
    expect(rotated.secret).not.toBe(w.secret);
    const expiresAt = Date.parse(rotated.previous_secret_expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + PREVIOUS_SECRET_VALIDITY_MS);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + PREVIOUS_SECRET_VALIDITY_MS);
    expect(PREVIOUS_SECRET_VALIDITY_MS).toBe(24 * 3600 * 1000);
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id: w.id } });
    expect(row).toMatchObject({ secret: rotated.secret, previousSecret: w.secret, previousSecretExpiresAt: new Date(expiresAt) });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/webhooks/${w.id}`)).json()).toEqual({ ...withoutSecret(w), updated_at: expect.stringMatching(ISO) });
  });

  it('keeps only the latest previous secret after two rotations', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const first = (await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/rotate-secret`)).json();
    const second = (await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/rotate-secret`)).json();
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id: w.id } });
    expect(row).toMatchObject({ secret: second.secret, previousSecret: first.secret });
  });
});

describe('webhook endpoint limit', () => {
  it(`allows ${MAX_WEBHOOKS} endpoints per user, even when created at once, and refuses one more with 409 webhook_limit_reached`, async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const responses = await Promise.all(
      Array.from({ length: MAX_WEBHOOKS + 5 }, () => call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: URL_OK, events: ['message.sent'] })),
    );

    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(MAX_WEBHOOKS);
    const refused = responses.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => [r.statusCode, r.json()])).toEqual(
      Array(5).fill([409, { error: 'webhook_limit_reached', message: `A user may have at most ${MAX_WEBHOOKS} webhook endpoints; delete one first.` }]),
    );
    expect(await api.db.webhook.count({ where: { userId } })).toBe(MAX_WEBHOOKS);

    const other = await createTestUser(api.db);
    await createWebhook(other.apiKey);
    await call(api.app, apiKey, 'DELETE', `/api/v1/webhooks/${responses.find((r) => r.statusCode === 201)!.json().id}`);
    await createWebhook(apiKey);
  });
});

describe('webhook user isolation', () => {
  it("answers 404 for another user's endpoint and delivery on every route, does not list them, and changes nothing", async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const w = await createWebhook(owner.apiKey);
    const delivery = await sendTest(owner.apiKey, w.id);
    const rowBefore = await api.db.webhook.findUniqueOrThrow({ where: { id: w.id } });

    for (const [method, url, payload] of routesOf(w.id, delivery.id)) {
      const res = await call(api.app, other.apiKey, method, url, payload);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 404, body: NOT_FOUND });
    }
    expect((await call(api.app, other.apiKey, 'GET', '/api/v1/webhooks')).json()).toEqual({ data: [], total: 0, limit: 20, offset: 0 });
    expect(await api.db.webhook.findUniqueOrThrow({ where: { id: w.id } })).toEqual(rowBefore);
    expect(await api.db.webhookDelivery.count({ where: { webhookId: w.id } })).toBe(1);
  });

  it("answers 404 when retrying a delivery through another of the user's endpoints", async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createWebhook(apiKey);
    const b = await createWebhook(apiKey);
    const delivery = await sendTest(apiKey, a.id);
    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${b.id}/deliveries/${delivery.id}/retry`);
    expect([res.statusCode, res.json()]).toEqual([404, { error: 'not_found', message: 'Delivery not found' }]);
  });
});
