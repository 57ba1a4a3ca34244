import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { call, createTestUser, send, startTestApi, uniquePhone, type Method, type TestApi } from './testing/test-api.ts';
import { phoneOwner, phoneRequest } from './testing/test-phone.ts';
import { reportsOfJob } from '@smsgw/queue';

/**
 * Issue 11, items 8 (U+0000 anywhere in a request of the user API), 14 (framework errors as
 * `{error, message}`, through inject) and 20 (unknown query parameters): each bad request is a 4xx
 * `{error, message}` and changes nothing. The device protocols stay lenient.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

/** Everything a refused request of the user API could have written for this user. */
async function footprint(userId: string) {
  const where = { where: { userId } };
  const [contacts, groups, templates, webhooks, devices, messages] = await Promise.all([
    api.db.contact.count(where),
    api.db.group.count(where),
    api.db.template.count(where),
    api.db.webhook.count(where),
    api.db.device.count(where),
    api.db.message.count(where),
  ]);
  return { contacts, groups, templates, webhooks, devices, messages };
}

const csv = (apiKey: string, text: string) =>
  api.app.inject({ method: 'POST', url: '/api/v1/contacts/import', headers: { 'x-api-key': apiKey, 'content-type': 'text/csv' }, payload: text });

describe('U+0000 in a request of the user API (item 8)', () => {
  it.each<[string, Method, string, unknown, string]>([
    ['a contact name', 'POST', '/api/v1/contacts', { name: 'Ada\u0000', phone: '+15550100001' }, "Invalid field 'name'"],
    ['a group name', 'POST', '/api/v1/groups', { name: 'family\u0000' }, "Invalid field 'name'"],
    ['a template body', 'POST', '/api/v1/templates', { name: 't', body: 'Hi {{name}}\u0000' }, "Invalid field 'body'"],
    ['a device name', 'POST', '/api/v1/devices', { name: 'phone\u0000' }, "Invalid field 'name'"],
    [
      'a webhook description',
      'POST',
      '/api/v1/webhooks',
      { url: 'https://hooks.example.com/x', events: ['message.sent'], description: 'a\u0000' },
      "Invalid field 'description'",
    ],
    ['a send body', 'POST', '/api/sms/send', { recipients: ['+15550100002'], body: 'hi\u0000' }, "Invalid field 'body'"],
    ['a send recipient', 'POST', '/api/sms/send', { recipients: ['+1555\u00000100003'], body: 'hi' }, "Invalid field 'recipients[0]'"],
    [
      'a template variable',
      'POST',
      '/api/sms/send-template',
      { recipients: ['+15550100004'], template_id: 'x', variables: { code: '1\u00002' } },
      "Invalid field 'variables.code'",
    ],
    ['a property name', 'POST', '/api/v1/groups', { 'name\u0000': 'x' }, 'A field name contains a NUL character'],
    ['a JSON contact import row', 'POST', '/api/v1/contacts/import', [{ name: 'a\u0000b', phone: '+15550100005' }], "Invalid field '[0].name'"],
    ['a contact name filter', 'GET', '/api/v1/contacts?name=Ada%00', undefined, "Invalid query parameter 'name'"],
    ['a contact phone filter', 'GET', '/api/v1/contacts?phone=%2B1555%00', undefined, "Invalid query parameter 'phone'"],
    ['a sender filter of incoming SMS', 'GET', '/api/v1/sms/received?from=BANK%00', undefined, "Invalid query parameter 'from'"],
    ['a query parameter name', 'GET', '/api/v1/contacts?na%00me=x', undefined, 'A query parameter name contains a NUL character'],
    ['a message id', 'GET', '/api/v1/sms/%00', undefined, "Invalid path parameter 'id'"],
    ['a group id', 'DELETE', '/api/v1/groups/%00', undefined, "Invalid path parameter 'id'"],
  ])('refuses NUL in %s with 400 invalid_request naming it, and changes nothing', async (_what, method, url, payload, named) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const before = await footprint(userId);

    const res = await call(api.app, apiKey, method, url, payload);

    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringContaining(named) },
    });
    expect(res.json().message).toContain('NUL character (U+0000)');
    expect(await footprint(userId)).toEqual(before);
  });

  it('refuses NUL in a CSV contact import with 400 and imports nothing', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await csv(apiKey, 'name,phone\nAda,+15550100006\nBad\u0000Name,+15550100007\n');
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: 'The request body must not contain a NUL character (U+0000).' },
    });
    expect(await api.db.contact.count({ where: { userId } })).toBe(0);
  });

  it('still imports a CSV without NUL', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await csv(apiKey, 'name,phone\nAda,+15550100008\n');
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { created: 1, updated: 0 } });
    expect(await api.db.contact.count({ where: { userId } })).toBe(1);
  });

  it('takes a native device report whose error holds NUL, queued with U+FFFD by the device core (never refused)', async () => {
    const { apiKey, devices } = await createTestUser(api.db);
    const device = devices[0]!;
    const [id] = (await send(api.app, apiKey, { recipients: [uniquePhone()], body: 'hi', device_id: device.id })).json().message_ids as string[];
    await assignMessages(api.sql, { assignments: [{ id: id!, deviceId: device.id }], now: new Date() });

    const res = await api.app.inject({
      method: 'POST',
      url: '/api/v1/device/reports',
      headers: { authorization: `Bearer ${device.token}` },
      payload: { reports: [{ id, status: 'failed', error: 'radio\u0000off' }] },
    });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 202, body: { accepted: 1, rejected: [] } });
    const jobs = await api.app.reportsQueue.getJobs(['waiting', 'delayed', 'prioritized', 'paused', 'active']);
    const queued = jobs
      .flatMap(reportsOfJob)
      .filter((p) => p.deviceId === device.id)
      .flatMap((p) => p.reports);
    expect(queued).toEqual([{ id, status: 'failed', error: 'radio\uFFFDoff' }]);
  });
});

describe('unknown query parameters (item 20)', () => {
  it.each([
    ['/api/v1/sms?stauts=failed', 'stauts'],
    ['/api/v1/sms?limit=5&device=x', 'device'],
    ['/api/v1/sms/received?sender=BANK', 'sender'],
    ['/api/v1/contacts?limit=5&email=a', 'email'],
    ['/api/v1/groups?page=2', 'page'],
    ['/api/v1/templates?q=x', 'q'],
    ['/api/v1/webhooks?enabled=true', 'enabled'],
  ])('refuses GET %s with 400 naming the parameter', async (url, name) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'GET', url);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: `Unknown query parameter '${name}'.` },
    });
  });

  it('still takes every parameter a list documents', async () => {
    const { apiKey, deviceId } = await createTestUser(api.db);
    const query = `status=queued&to=%2B15550100009&batch_id=${deviceId}&device_id=${deviceId}&limit=5&offset=0`;
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms?${query}`)).statusCode).toBe(200);
    expect((await call(api.app, apiKey, 'GET', '/api/v1/contacts?name=a&phone=%2B15550100009&limit=1&offset=0')).statusCode).toBe(200);
  });

  it('leaves writes and the Vendel alias alone: a send with a query parameter is accepted, and so is GET /api/plans/quota (SDK clients)', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await api.app.inject({
      method: 'POST',
      url: '/api/sms/send?source=sdk',
      headers: { 'x-api-key': apiKey },
      payload: { recipients: [uniquePhone()], body: 'hi' },
    });
    expect(res.statusCode).toBe(200);
    expect((await call(api.app, apiKey, 'GET', '/api/plans/quota?v=2')).statusCode).toBe(200);
    expect(await api.db.message.count({ where: { userId } })).toBe(1);
  });

  it('never refuses a phone for a parameter it does not know: SMS Gate pull and native claim', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    const pull = await phoneRequest(api.app, 'GET', '/mobile/v1/message?order=fifo&since=0', { authorization: `Bearer ${phone.token}` });
    expect({ status: pull.statusCode, body: pull.json() }).toEqual({ status: 200, body: [] });

    const { devices } = await createTestUser(api.db);
    const claim = await api.app.inject({
      method: 'GET',
      url: '/api/v1/device/messages?limit=5&client=modem-agent',
      headers: { authorization: `Bearer ${devices[0]!.token}` },
    });
    expect({ status: claim.statusCode, body: claim.json() }).toEqual({ status: 200, body: { messages: [] } });
  });
});

describe('framework errors as {error, message} (item 14)', () => {
  it('answers a path that is not valid percent-encoding with 400 invalid_request', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'GET', '/api/v1/sms/%E0%A4%A');
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringContaining('URL path') },
    });
  });

  it('answers a path segment over 100 characters with 414 uri_too_long', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'GET', `/api/v1/sms/${'a'.repeat(101)}`);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 414,
      body: { error: 'uri_too_long', message: expect.any(String) },
    });
  });

  it.each(['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded'])(
    'answers a %s body on a JSON route with 415 and sends nothing',
    async (type) => {
      const { apiKey, userId } = await createTestUser(api.db);
      const res = await api.app.inject({
        method: 'POST',
        url: '/api/sms/send',
        headers: { 'x-api-key': apiKey, 'content-type': type },
        payload: '{"recipients":["+15550100010"],"body":"hi"}',
      });
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 415,
        body: { error: 'unsupported_media_type', message: 'Content-Type must be application/json.' },
      });
      expect(await api.db.message.count({ where: { userId } })).toBe(0);
    },
  );

  it.each<[string, string, string]>([
    ['DELETE', '/api/sms/send', 'POST'],
    ['PUT', '/api/v1/sms/0198a8f0-0000-7000-8000-000000000000', 'GET, HEAD'],
    ['PUT', '/api/v1/contacts', 'GET, HEAD, POST'],
    ['POST', '/api/v1/groups/0198a8f0-0000-7000-8000-000000000000/members/x', 'DELETE'],
    ['DELETE', '/mobile/v1/message', 'GET, HEAD, PATCH'],
  ])('answers %s %s with 405 method_not_allowed and Allow: %s', async (method, url, allow) => {
    const res = await api.app.inject({ method: method as 'GET', url });
    expect({ status: res.statusCode, allow: res.headers.allow, body: res.json() }).toEqual({
      status: 405,
      allow,
      body: { error: 'method_not_allowed', message: expect.stringContaining(`it allows ${allow}`) },
    });
  });

  it('still answers a path that does not exist with 404', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 404,
      body: { error: 'not_found', message: 'Route GET /api/v1/nothing-here not found' },
    });
  });
});
