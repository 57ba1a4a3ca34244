import { afterAll, beforeAll, expect, it } from 'vitest';
import { publicUrl } from '@smsgw/config';
import { storeSmsGateSettings } from '@smsgw/db';
import { createTestUser, type TestApi, startTestApi } from '../testing/test-api.ts';
import { newerClient, publishedClient } from '../testing/sms-gate-client.ts';

/** `GET /api/v1/sms-gate`: what SMS Gate's libraries need, shown in the console (docs/compatibility.md). */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

const account = (headers: Record<string, string>) => api.app.inject({ method: 'GET', url: '/api/v1/sms-gate', headers });

it('answers the address, the username and the signing key, with which the published library logs in', async () => {
  const u = await createTestUser(api.db, { devices: 1 });
  const res = await account({ 'x-api-key': u.apiKey });
  expect(res.statusCode).toBe(200);
  const shown = res.json() as { url: string; username: string; user_id: string; webhook_signing_key: string };
  expect(shown).toEqual({
    url: `${publicUrl(api.app.config)}/3rdparty/v1`,
    username: u.user.name,
    user_id: u.userId,
    webhook_signing_key: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
  // The same key on every read; the one the settings hold once the user sets another.
  expect((await account({ 'x-api-key': u.apiKey })).json().webhook_signing_key).toBe(shown.webhook_signing_key);
  await storeSmsGateSettings(api.sql, u.userId, { webhooks: { signing_key: 'chosen-key' } });
  expect((await account({ 'x-api-key': u.apiKey })).json().webhook_signing_key).toBe('chosen-key');

  const devices = await publishedClient(baseUrl, shown.username, u.apiKey).getDevices();
  expect(devices.map((d) => d.id)).toEqual([u.devices[0]!.id]);
});

it('needs a login, and settings:read of a scoped token', async () => {
  const u = await createTestUser(api.db);
  expect((await account({})).statusCode).toBe(401);
  const client = newerClient(baseUrl, u.user.name, u.apiKey);
  const [reader, sender] = [await client.generateToken({ scopes: ['settings:read'] }), await client.generateToken({ scopes: ['messages:send'] })];
  expect((await account({ authorization: `Bearer ${reader.access_token}` })).statusCode).toBe(200);
  const refused = await account({ authorization: `Bearer ${sender.access_token}` });
  expect({ status: refused.statusCode, body: refused.json() }).toEqual({
    status: 403,
    body: { error: 'forbidden', message: expect.stringContaining('settings:read') },
  });
});
