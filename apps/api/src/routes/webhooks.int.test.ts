import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_EVENT_TYPES, TEST_EVENT_TYPE, type Resolver } from '@smsgw/core';
import { PREVIOUS_SECRET_VALIDITY_MS, TEST_EVENT_MESSAGE } from '@smsgw/db';
import { call, countJobs, createTestUser, startTestApi, type Method, type TestApi } from '../testing/test-api.ts';
import { MAX_WEBHOOKS } from './webhooks.ts';

// The stub DNS: names not listed do not resolve.
const HOSTS: Record<string, string[]> = {
  'hooks.example': ['93.184.215.14'],
  'other.example': ['93.184.215.15'],
  'internal.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '10.1.2.3'],
  localhost: ['127.0.0.1', '::1'],
};
const resolver: Resolver = async (hostname) => {
  const addresses = HOSTS[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses;
};

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: resolver });
});
afterAll(async () => {
  await api?.close();
});

interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}
interface Delivery {
  id: string;
  type: string;
  message_id: string | null;
  state: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

const URL_OK = 'https://hooks.example/smsgw';
const NOT_FOUND = { error: 'not_found', message: 'Webhook not found' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createWebhook(apiKey: string, body: Record<string, unknown> = {}): Promise<Webhook & { secret: string }> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: URL_OK, events: [...MESSAGE_EVENT_TYPES], ...body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function sendTest(apiKey: string, webhookId: string): Promise<Delivery> {
  const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${webhookId}/test`);
  expect(res.statusCode).toBe(202);
  return res.json();
}

/** The webhook's record as GET shows it: the create response without the secret. */
function withoutSecret({ secret: _secret, ...record }: Webhook & { secret: string }): Webhook {
  return record;
}

/** Every route of one webhook, with a valid body where one is needed. */
function routesOf(id: string, deliveryId: string = randomUUID()): [Method, string, unknown?][] {
  return [
    ['GET', `/api/v1/webhooks/${id}`],
    ['PATCH', `/api/v1/webhooks/${id}`, { description: 'stolen' }],
    ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
    ['POST', `/api/v1/webhooks/${id}/test`],
    ['GET', `/api/v1/webhooks/${id}/deliveries`],
    ['POST', `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`],
    ['DELETE', `/api/v1/webhooks/${id}`],
  ];
}

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

describe('webhook test events and deliveries', () => {
  it('creates a pending webhook.test delivery, due now, and exactly one job for it', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const jobsBefore = await countJobs(api.app.webhooksQueue);

    const before = Date.now();
    const delivery = await sendTest(apiKey, w.id);

    expect(delivery).toEqual({
      id: expect.any(String),
      type: TEST_EVENT_TYPE,
      message_id: null,
      state: 'pending',
      attempts: 0,
      last_status_code: null,
      last_error: null,
      last_attempt_at: null,
      next_attempt_at: expect.stringMatching(ISO),
      created_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(delivery.next_attempt_at!)).toBeGreaterThanOrEqual(before - 5);
    const row = await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
    expect(row).toMatchObject({ webhookId: w.id, userId, data: { webhook_id: w.id, message: TEST_EVENT_MESSAGE } });
    const job = await api.app.webhooksQueue.getJob(delivery.id);
    expect(job).toMatchObject({ id: delivery.id, name: 'webhook.deliver', data: { deliveryId: delivery.id, webhookId: w.id } });
    expect(await countJobs(api.app.webhooksQueue)).toBe(jobsBefore + 1);
  });

  it('refuses a test on a disabled endpoint with 409 webhook_disabled and creates nothing', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { enabled: false });

    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/test`);

    expect([res.statusCode, res.json()]).toEqual([409, { error: 'webhook_disabled', message: expect.any(String) }]);
    expect(await api.db.webhookDelivery.count({ where: { webhookId: w.id } })).toBe(0);
  });

  it("lists an endpoint's deliveries newest first with pagination, and only that endpoint's", async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const sibling = await createWebhook(apiKey);
    const a = await sendTest(apiKey, w.id);
    const b = await sendTest(apiKey, w.id);
    const c = await sendTest(apiKey, w.id);
    await sendTest(apiKey, sibling.id);

    const url = `/api/v1/webhooks/${w.id}/deliveries`;
    expect((await call(api.app, apiKey, 'GET', url)).json()).toEqual({ data: [c, b, a], total: 3, limit: 20, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', `${url}?limit=2&offset=1`)).json()).toEqual({ data: [b, a], total: 3, limit: 2, offset: 1 });
    for (const query of ['limit=101', 'offset=-1', 'limit=abc']) {
      const res = await call(api.app, apiKey, 'GET', `${url}?${query}`);
      expect({ query, status: res.statusCode, error: res.json().error }).toEqual({ query, status: 400, error: 'invalid_request' });
    }
  });

  it('retries a failed delivery: pending again, due now, attempts kept, and a job for it', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const delivery = await sendTest(apiKey, w.id);
    // As the worker leaves a delivery that failed for good: no job, no next attempt.
    await (await api.app.webhooksQueue.getJob(delivery.id))!.remove();
    await api.db.webhookDelivery.update({
      where: { id: delivery.id },
      data: { state: 'failed', attempts: 8, lastStatusCode: 500, lastError: 'HTTP 500', lastAttemptAt: new Date(), nextAttemptAt: null },
    });

    const before = Date.now();
    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/deliveries/${delivery.id}/retry`);

    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      ...delivery,
      state: 'pending',
      attempts: 8,
      last_status_code: 500,
      last_error: 'HTTP 500',
      last_attempt_at: expect.stringMatching(ISO),
      next_attempt_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.json().next_attempt_at)).toBeGreaterThanOrEqual(before - 5);
    expect(await (await api.app.webhooksQueue.getJob(delivery.id))?.getState()).toBe('waiting');
  });

  it('retries a delivery whose job waits for a later attempt by promoting that job', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const delivery = await sendTest(apiKey, w.id);
    const queue = api.app.webhooksQueue;
    await (await queue.getJob(delivery.id))!.remove();
    await queue.add('webhook.deliver', { deliveryId: delivery.id, webhookId: w.id }, { jobId: delivery.id, delay: 3600_000 });
    expect(await (await queue.getJob(delivery.id))!.getState()).toBe('delayed');

    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/deliveries/${delivery.id}/retry`);

    expect(res.statusCode).toBe(202);
    expect(await (await queue.getJob(delivery.id))!.getState()).toBe('waiting');
  });

  it('refuses a retry on a disabled endpoint with 409 webhook_disabled and leaves the delivery as it was', async () => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const delivery = await sendTest(apiKey, w.id);
    await api.db.webhookDelivery.update({ where: { id: delivery.id }, data: { state: 'failed', attempts: 8, nextAttemptAt: null } });
    await call(api.app, apiKey, 'PATCH', `/api/v1/webhooks/${w.id}`, { enabled: false });

    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/deliveries/${delivery.id}/retry`);

    expect([res.statusCode, res.json().error]).toEqual([409, 'webhook_disabled']);
    expect(await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({ state: 'failed', nextAttemptAt: null });
  });

  it.each([
    ['a delivery that does not exist', () => randomUUID()],
    ['a malformed delivery id', () => 'xyz'],
  ])('answers 404 for %s on retry', async (_what, deliveryId) => {
    const { apiKey } = await createTestUser(api.db);
    const w = await createWebhook(apiKey);
    const res = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${w.id}/deliveries/${deliveryId()}/retry`);
    expect([res.statusCode, res.json()]).toEqual([404, { error: 'not_found', message: 'Delivery not found' }]);
  });
});

describe('webhook targets (no private addresses allowed)', () => {
  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00::1]/',
    'http://0.0.0.0/',
    'http://localhost/',
    'http://internal.example/',
    'http://mixed.example/',
  ])('refuses %s with 400 invalid_webhook_url naming the internal address', async (url) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url, events: ['message.sent'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid_webhook_url',
      message: expect.stringMatching(/^The (address \S+ is|host \S+ resolves to \S+,) a loopback, private or otherwise internal address/),
    });
    expect(await api.db.webhook.count({ where: { userId } })).toBe(0);
  });

  it('names the private address a host name resolves to', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: 'https://mixed.example/in', events: ['message.sent'] });
    expect(res.json().message).toContain('mixed.example resolves to 10.1.2.3');
  });

  it('refuses a host name that does not resolve with 400 invalid_webhook_url saying so', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: 'https://nowhere.example/in', events: ['message.sent'] });
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'invalid_webhook_url', message: 'The host nowhere.example does not resolve.' }]);
  });

  it('accepts a host name that resolves to a public address, and a public IP literal', async () => {
    const { apiKey } = await createTestUser(api.db);
    expect((await createWebhook(apiKey, { url: 'https://hooks.example:8443/in?x=1' })).url).toBe('https://hooks.example:8443/in?x=1');
    expect((await createWebhook(apiKey, { url: 'http://93.184.215.14/in' })).url).toBe('http://93.184.215.14/in');
  });
});

describe('webhook targets with WEBHOOK_ALLOW_PRIVATE=true', () => {
  let privateApi: TestApi;
  beforeAll(async () => {
    privateApi = await startTestApi({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { webhookResolver: resolver });
  });
  afterAll(async () => {
    await privateApi?.close();
  });

  it('accepts loopback and private targets', async () => {
    const { apiKey } = await createTestUser(privateApi.db);
    for (const url of ['http://127.0.0.1:9/hook', 'http://internal.example/hook']) {
      const res = await call(privateApi.app, apiKey, 'POST', '/api/v1/webhooks', { url, events: ['message.sent'] });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 201 });
    }
  });

  it('still refuses a host that does not resolve and a non-http scheme', async () => {
    const { apiKey } = await createTestUser(privateApi.db);
    for (const url of ['http://nowhere.example/', 'gopher://127.0.0.1/']) {
      const res = await call(privateApi.app, apiKey, 'POST', '/api/v1/webhooks', { url, events: ['message.sent'] });
      expect({ url, status: res.statusCode, error: res.json().error }).toEqual({ url, status: 400, error: 'invalid_webhook_url' });
    }
  });
});
