import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('health and readiness', () => {
  it('GET /health answers 200 {status: ok} without credentials', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /ready answers 200 with Postgres and Redis checked ok', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });
});

describe('GET /docs/json', () => {
  it('is an OpenAPI 3.1 document with the send and read operations of the spec', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.paths['/api/sms/send']).toHaveProperty('post');
    expect(doc.paths['/api/v1/sms']).toHaveProperty('get');
    expect(doc.paths['/api/v1/sms/{id}']).toHaveProperty('get');
  });

  it('documents both ways to authenticate and the list filters', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(doc.components.securitySchemes).toMatchObject({
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    const parameters = (doc.paths['/api/v1/sms'].get.parameters as { name: string; in: string }[]).filter((p) => p.in === 'query').map((p) => p.name);
    expect(parameters.sort()).toEqual(['batch_id', 'cursor', 'device_id', 'limit', 'offset', 'status', 'to']);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/nope'],
    ['POST', '/api/v1/nothing-here'],
    ['GET', '/api/v2/sms'],
  ] as const)('%s %s answers 404 JSON not_found', async (method, url) => {
    const res = await api.app.inject({ method, url: `${url}?x=1` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'not_found', message: `Route ${method} ${url} not found` });
  });
});

describe('metrics', () => {
  it('GET /metrics counts accepted messages and times requests by route, in Prometheus text format', async () => {
    const { apiKey } = await createTestUser(api.db);
    const accepted = await send(api.app, apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone()], body: 'counted' });
    expect(accepted.statusCode).toBe(200);
    const refused = await send(api.app, apiKey, { recipients: ['not-a-number'], body: 'not counted' });
    expect(refused.statusCode).toBe(400);

    const res = await api.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/^smsgw_messages_accepted_total\{endpoint="send"\} 3$/m);
    expect(res.body).toMatch(/^smsgw_http_request_duration_seconds_count\{method="POST",route="\/api\/sms\/send",status_code="200"\} 1$/m);
    expect(res.body).toMatch(/^smsgw_http_request_duration_seconds_count\{method="POST",route="\/api\/sms\/send",status_code="400"\} 1$/m);
    expect(res.body).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it('says whether Postgres and Redis answer, and how many jobs wait in each queue', async () => {
    const { apiKey } = await createTestUser(api.db);
    const waiting = async () => Number(/^smsgw_queue_jobs\{queue="dispatch",state="waiting"\} (\d+)$/m.exec((await api.app.inject('/metrics')).body)?.[1]);
    const before = await waiting();
    // No dispatcher runs here: each message's dispatch job waits.
    expect((await send(api.app, apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'queued' })).statusCode).toBe(200);
    expect(await waiting()).toBe(before + 2);

    const { body } = await api.app.inject('/metrics');
    expect(body).toMatch(/^smsgw_store_up\{store="postgres"\} 1$/m);
    expect(body).toMatch(/^smsgw_store_up\{store="redis"\} 1$/m);
    for (const queue of ['dispatch', 'reports', 'webhooks']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed'])
        expect(body).toMatch(new RegExp(`^smsgw_queue_jobs\\{queue="${queue}",state="${state}"\\} \\d+$`, 'm'));
    }
  });
});

describe('when Postgres cannot be reached', () => {
  it('answers 503 service_unavailable (retry later) rather than 500, and /ready says which dependency is down', async () => {
    const broken = await startTestApi({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    try {
      const res = await send(broken.app, 'smsgw_sk_whatever', { recipients: ['+15550000001'], body: 'hi' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'service_unavailable', message: 'The service cannot take this request right now; retry later.' });
      expect(res.headers['retry-after']).toBe('5');
      const ready = await broken.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.redis).toBe('ok');
      expect(ready.json().checks.postgres).toBe('down');
      // The scrape still answers: the store is down, and what only it knows is left out rather than stale.
      const metrics = await broken.app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toMatch(/^smsgw_store_up\{store="postgres"\} 0$/m);
      expect(metrics.body).toMatch(/^smsgw_store_up\{store="redis"\} 1$/m);
      expect(metrics.body).not.toMatch(/^smsgw_devices\{/m);
      expect(metrics.body).toMatch(/^smsgw_queue_jobs\{queue="dispatch",state="waiting"\} 0$/m);
    } finally {
      await broken.close();
    }
  });
});
