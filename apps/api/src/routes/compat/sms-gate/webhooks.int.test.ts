import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@smsgw/core';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { newerClient, publishedClient } from '../../../testing/sms-gate-client.ts';
import { MAX_REFRESHED } from './inbox-refresh.ts';

/**
 * `/3rdparty/v1/webhooks` and `/inbox/refresh`: the scopes, every refusal in upstream's `{message}`
 * with nothing changed, and the `sms:received` deliveries a refresh writes for the engine.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  // Every host resolves to one public address, as the other webhook tests do (no DNS here).
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.215.14'] });
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

const URL = 'https://hooks.example.org/sms';

function call(u: TestUser, method: 'GET' | 'POST' | 'DELETE', path: string, payload?: object, token = u.apiKey) {
  return api.app.inject({ method, url: `/3rdparty/v1${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined && { payload }) });
}

/** Everything a refusal could have changed. */
async function footprint(userId: string) {
  const [webhooks, deliveries] = await Promise.all([
    api.db.webhook.findMany({ where: { userId }, orderBy: { id: 'asc' } }),
    api.db.webhookDelivery.count({ where: { userId } }),
  ]);
  return { webhooks, deliveries };
}

/** Received SMS of the user's first device, stored at the given receive times. */
async function received(u: TestUser, times: Date[], device = u.devices[0]!.id) {
  await api.db.receivedMessage.createMany({
    data: times.map((at, i) => ({ id: newId(), userId: u.userId, deviceId: device, from: '+15557654321', body: `sms ${i}`, receivedAt: at })),
  });
}

describe('SMS Gate webhooks and inbox refresh', () => {
  it("refuses a token without the route's scope with 403, changing nothing", async () => {
    const u = await createTestUser(api.db);
    await call(u, 'POST', '/webhooks', { id: 'kept', url: URL, event: 'sms:sent' });
    const { access_token: token } = await newerClient(baseUrl, u.user.name, u.apiKey).generateToken({ scopes: ['messages:send'] });
    const before = await footprint(u.userId);
    await expect(publishedClient(baseUrl, u.user.name, token).getWebhooks()).rejects.toThrow('HTTP error 403: {"message":"scope required: webhooks:list"}');
    for (const [method, path, scope, body] of [
      ['POST', '/webhooks', 'webhooks:write', { url: URL, event: 'sms:sent' }],
      ['DELETE', '/webhooks/kept', 'webhooks:delete', undefined],
      ['POST', '/inbox/refresh', 'inbox:refresh', { since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z', webhookDelivery: 'Individual' }],
    ] as const) {
      const res = await call(u, method, path, body, token);
      expect([res.statusCode, res.json()]).toEqual([403, { message: `scope required: ${scope}` }]);
    }
    const { access_token: lister } = await newerClient(baseUrl, u.user.name, u.apiKey).generateToken({ scopes: ['webhooks:list'] });
    expect((await call(u, 'GET', '/webhooks', undefined, lister)).json()).toEqual([{ id: 'kept', deviceId: null, url: URL, event: 'sms:sent' }]);
    expect(await footprint(u.userId)).toEqual(before);
  });

  it("answers every bad registration 400 with upstream's {message}, changing nothing", async () => {
    const u = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    await call(u, 'POST', '/webhooks', { id: 'kept', url: URL, event: 'sms:sent' });
    const before = await footprint(u.userId);
    for (const [body, message] of [
      [{ url: URL, event: 'sms:nope' }, 'invalid "event" = "sms:nope": invalid event'],
      [{ url: URL, event: 'mms:received' }, expect.stringContaining('invalid "event" = "mms:received": not emitted by this server')],
      [{ url: URL, event: 'sms:sent', deviceId: other.devices[0]!.id }, `invalid "device_id" = "${other.devices[0]!.id}": device not found`],
      [{ url: URL, event: 'sms:sent', deviceId: 'PyDmBQZZXYmyxMwED8Fzy' }, 'invalid "device_id" = "PyDmBQZZXYmyxMwED8Fzy": device not found'],
      [{ url: 'ftp://hooks.example.org/sms', event: 'sms:sent' }, expect.stringMatching(/^invalid "url": /)],
      [{ url: 'http://127.0.0.1:9/hook', event: 'sms:sent' }, expect.stringMatching(/^invalid "url": /)],
      [{ id: 'kept', url: 'not a url', event: 'sms:failed' }, expect.stringMatching(/^invalid "url": /)],
      [{ event: 'sms:sent' }, expect.any(String)],
      [{ id: 'x'.repeat(37), url: URL, event: 'sms:sent' }, expect.any(String)],
    ] as const) {
      const res = await call(u, 'POST', '/webhooks', body);
      expect([res.statusCode, res.json()]).toEqual([400, { message }]);
    }
    expect(await footprint(u.userId)).toEqual(before);
  });

  it("accepts plain http, answers 204 to a delete of nothing, and counts against the user's webhook limit", async () => {
    const u = await createTestUser(api.db);
    const created = await call(u, 'POST', '/webhooks', {
      url: 'http://hooks.example.org/sms',
      event: 'sms:received',
      deviceId: u.devices[0]!.id.toUpperCase(),
    });
    expect([created.statusCode, created.json()]).toEqual([
      201,
      { id: expect.any(String), deviceId: u.devices[0]!.id, url: 'http://hooks.example.org/sms', event: 'sms:received' },
    ]);
    expect((await call(u, 'DELETE', '/webhooks/none')).statusCode).toBe(204);
    for (let i = 1; i < 20; i++) expect((await call(u, 'POST', '/webhooks', { id: `h${i}`, url: URL, event: 'sms:sent' })).statusCode).toBe(201);
    const before = await footprint(u.userId);
    const full = await call(u, 'POST', '/webhooks', { id: 'one-more', url: URL, event: 'sms:sent' });
    expect([full.statusCode, full.json().message]).toEqual([409, expect.stringContaining('at most 20 webhooks')]);
    // Replacing one is no new endpoint; smsgw's own API counts them too, and cannot touch them.
    expect((await call(u, 'POST', '/webhooks', { id: 'h1', url: URL, event: 'sms:failed' })).statusCode).toBe(201);
    const own = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
      api.app.inject({ method, url, headers: { 'x-api-key': u.apiKey }, ...(payload && { payload }) });
    expect((await own('POST', '/api/v1/webhooks', { url: URL, events: ['message.sent'] })).statusCode).toBe(409);
    const row = before.webhooks[0]!;
    expect((await own('PATCH', `/api/v1/webhooks/${row.id}`, { events: ['message.sent'] })).statusCode).toBe(404);
    expect((await own('DELETE', `/api/v1/webhooks/${row.id}`)).statusCode).toBe(404);
    expect((await footprint(u.userId)).webhooks.length).toBe(20);
  });

  it('writes an sms:received delivery per received SMS of the window to the sms:received webhooks, as upstream only when asked', async () => {
    const u = await createTestUser(api.db, { devices: 2 });
    await call(u, 'POST', '/webhooks', { id: 'all', url: URL, event: 'sms:received' });
    await call(u, 'POST', '/webhooks', { id: 'second', url: URL, event: 'sms:received', deviceId: u.devices[1]!.id });
    await call(u, 'POST', '/webhooks', { id: 'sent', url: URL, event: 'sms:sent' });
    await received(u, [new Date('2026-03-01T10:00:00Z'), new Date('2026-03-01T12:00:00Z'), new Date('2026-03-03T00:00:00Z')]);
    await received(u, [new Date('2026-03-01T11:00:00Z')], u.devices[1]!.id);
    const refresh = (body: object) => call(u, 'POST', '/inbox/refresh', { since: '2026-03-01T00:00:00Z', until: '2026-03-02T00:00:00Z', ...body });

    for (const body of [
      {},
      { triggerWebhooks: false },
      { webhookDelivery: 'Disabled', triggerWebhooks: true },
      { webhookDelivery: 'Individual', messageTypes: ['MMS'] },
    ]) {
      expect((await refresh(body)).statusCode).toBe(202);
    }
    expect(await api.db.webhookDelivery.count({ where: { userId: u.userId } })).toBe(0);

    const res = await refresh({ webhookDelivery: 'Individual' });
    expect([res.statusCode, res.body]).toEqual([202, 'Accepted']);
    const rows = await api.db.webhookDelivery.findMany({ where: { userId: u.userId }, include: { webhook: true } });
    const sent = rows.map((r) => [
      r.webhook!.clientId,
      (r.data as { device_id: string; body: string }).device_id === u.devices[1]!.id ? 'second device' : 'first device',
      (r.data as { body: string }).body,
      r.type,
      r.state,
    ]);
    expect(sent.sort()).toEqual([
      ['all', 'first device', 'sms 0', 'message.received', 'pending'],
      ['all', 'first device', 'sms 1', 'message.received', 'pending'],
      ['all', 'second device', 'sms 0', 'message.received', 'pending'],
      ['second', 'second device', 'sms 0', 'message.received', 'pending'],
    ]);
    // The deprecated flag, for one device: its SMS again, to each webhook whose filter lets it through.
    expect((await refresh({ triggerWebhooks: true, deviceId: u.devices[1]!.id })).statusCode).toBe(202);
    expect(await api.db.webhookDelivery.count({ where: { userId: u.userId } })).toBe(6);
  });

  it('refuses a bad refresh with 400, and a window of more than the cap, writing nothing', async () => {
    const u = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    await call(u, 'POST', '/webhooks', { url: URL, event: 'sms:received' });
    const start = Date.parse('2026-04-01T00:00:00Z');
    await received(
      u,
      Array.from({ length: MAX_REFRESHED + 1 }, (_, i) => new Date(start + i * 1000)),
    );
    const window = { since: '2026-04-01T00:00:00Z', until: '2026-04-02T00:00:00Z', webhookDelivery: 'Individual' };
    for (const [body, message] of [
      [{ ...window, since: '2026-04-03T00:00:00Z' }, 'since must be before or equal to until'],
      [{ ...window, deviceId: other.devices[0]!.id }, `invalid "deviceId" = "${other.devices[0]!.id}": device not found`],
      [{ ...window, messageTypes: ['DATA_SMS'] }, expect.any(String)],
      [{ ...window, webhookDelivery: 'Sometimes' }, expect.any(String)],
      [{ ...window, since: 'yesterday' }, expect.any(String)],
      [{ until: window.until }, expect.any(String)],
      [window, `the window holds more than ${MAX_REFRESHED} received messages: refresh a narrower one`],
    ] as const) {
      const res = await call(u, 'POST', '/inbox/refresh', body);
      expect([res.statusCode, res.json()]).toEqual([400, { message }]);
    }
    expect(await api.db.webhookDelivery.count({ where: { userId: u.userId } })).toBe(0);
    expect((await call(u, 'POST', '/inbox/refresh', { ...window, until: '2026-04-01T00:16:39Z' })).statusCode).toBe(202);
    expect(await api.db.webhookDelivery.count({ where: { userId: u.userId } })).toBe(MAX_REFRESHED);
  });
});
