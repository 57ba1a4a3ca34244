import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { TEST_EVENT_TYPE } from '@smsgw/core';
import { TEST_EVENT_MESSAGE } from '@smsgw/db';
import { call, countJobs, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { ISO, stubResolver, webhookRequests } from '../testing/webhook-requests.ts';

/** /api/v1/webhooks: test events and deliveries, and the targets an endpoint may have. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: stubResolver });
});
afterAll(async () => {
  await api?.close();
});
const { createWebhook, sendTest } = webhookRequests(() => api);

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
    privateApi = await startTestApi({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { webhookResolver: stubResolver });
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
