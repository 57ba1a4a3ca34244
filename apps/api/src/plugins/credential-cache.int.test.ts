import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { deleteDevice, LISTENER_NAME, rotateDeviceToken, setUserDisabled, setUserQuota } from '@smsgw/db';
import { buildApp } from '../app.ts';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { phoneOwner, phoneRequest, signedHeaders } from '../testing/test-phone.ts';

/**
 * The credential cache of each API process, with two processes' worth of API on one database (two
 * Fastify instances in this process, each with its own cache and its own listening connection):
 * what one revokes, the other refuses within a second; what neither changes costs no statement.
 */
let api: TestApi;
let other: FastifyInstance;
beforeAll(async () => {
  api = await startTestApi();
  other = await buildApp({ config: api.config, logger: false });
});
afterAll(async () => {
  await other?.close();
  await api?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const list = (app: FastifyInstance, headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/sms', headers });
/** The other process refuses `headers` within a second (it served them, from its cache, just before). */
async function refusedByTheOtherWithinASecond(headers: Record<string, string>) {
  await vi.waitFor(async () => expect((await list(other, headers)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
}

describe('credentials cached in each API process', () => {
  it('refuses on the other process, within a second, an API key revoked through the first', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const headers = { 'x-api-key': apiKey };
    expect((await list(other, headers)).statusCode).toBe(200);
    const keyId = (await call(api.app, apiKey, 'GET', '/api/v1/api-keys')).json().data[0].id as string;

    expect((await call(api.app, apiKey, 'DELETE', `/api/v1/api-keys/${keyId}`)).statusCode).toBe(204);

    await refusedByTheOtherWithinASecond(headers);
    expect((await list(api.app, headers)).statusCode).toBe(401);
  });

  it('refuses the JWTs of a user disabled as the CLI does it (straight in Postgres) within a second, on both processes', async () => {
    const { user, apiKey } = await createTestUser(api.db, { devices: 0 });
    const token = (await api.app.inject({ method: 'POST', url: '/api/v1/auth/token', headers: { 'x-api-key': apiKey } })).json().token as string;
    const headers = { authorization: `Bearer ${token}` };
    expect([(await list(api.app, headers)).statusCode, (await list(other, headers)).statusCode]).toEqual([200, 200]);

    await setUserDisabled(api.db, { userId: user.id, disabled: true });

    await refusedByTheOtherWithinASecond(headers);
    await vi.waitFor(async () => expect((await list(api.app, headers)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
  });

  it('refuses on the other process, within a second, an SMS Gate token revoked through the first', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const created = await api.app.inject({
      method: 'POST',
      url: '/3rdparty/v1/auth/token',
      headers: { 'x-api-key': apiKey },
      payload: { scopes: ['messages:list'] },
    });
    expect(created.statusCode).toBe(201);
    const { id, access_token: access } = created.json() as { id: string; access_token: string };
    const read = (app: FastifyInstance) => app.inject({ method: 'GET', url: '/3rdparty/v1/messages', headers: { authorization: `Bearer ${access}` } });
    expect((await read(other)).statusCode).toBe(200);

    expect((await api.app.inject({ method: 'DELETE', url: `/3rdparty/v1/auth/token/${id}`, headers: { 'x-api-key': apiKey } })).statusCode).toBe(204);

    await vi.waitFor(async () => expect((await read(other)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
  });

  it('applies a new monthly quota on the other process within a second', async () => {
    const { user, apiKey } = await createTestUser(api.db, { devices: 0 });
    const limit = async () => (await call(other, apiKey, 'GET', '/api/v1/quota')).json().limit as number;
    expect(await limit()).toBe(api.config.MONTHLY_QUOTA_DEFAULT);

    await setUserQuota(api.db, { userId: user.id, limit: 7 });

    await vi.waitFor(async () => expect(await limit()).toBe(7), { timeout: 1000, interval: 5 });
  });

  it('reads a known API key and a known JWT from Postgres once, not on every request', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const token = (await other.inject({ method: 'POST', url: '/api/v1/auth/token', headers: { 'x-api-key': apiKey } })).json().token as string;
    const query = vi.spyOn(other.sql, 'query');
    const credentialReads = () => query.mock.calls.filter(([text]) => typeof text === 'string' && /FROM (api_keys|users) /.test(text)).length;

    for (let i = 0; i < 5; i++) expect((await list(other, { 'x-api-key': apiKey })).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await list(other, { authorization: `Bearer ${token}` })).statusCode).toBe(200);

    expect(credentialReads()).toBe(1);
  });

  it('asks Postgres on every request while its announcements cannot be heard, and caches again once they can', async () => {
    const { user, apiKey } = await createTestUser(api.db, { devices: 0 });
    const headers = { 'x-api-key': apiKey };
    expect((await list(other, headers)).statusCode).toBe(200);

    // The listening connections of this database end (a Postgres restart, a network cut).
    await api.sql.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, [LISTENER_NAME]);
    await vi.waitFor(() => expect([api.app.credentialCache.live, other.credentialCache.live]).toEqual([false, false]));
    await setUserDisabled(api.db, { userId: user.id, disabled: true });
    // Refused at once: nothing is served from the cache while a change could go unheard.
    expect((await list(other, headers)).statusCode).toBe(401);

    await setUserDisabled(api.db, { userId: user.id, disabled: false });
    await vi.waitFor(() => expect(other.credentialCache.live).toBe(true), { timeout: 5000 });
    expect((await list(other, headers)).statusCode).toBe(200);
    expect(other.credentialCache.size).toBeGreaterThan(0);
  });
});

// SMS Gate phones' device tokens (routes/device-protocols/sms-gate/phone-auth.ts).
const pull = (app: FastifyInstance, token: string) => phoneRequest(app, 'GET', '/mobile/v1/message', { authorization: `Bearer ${token}` });
const phoneRefusedByTheOtherWithinASecond = (token: string) =>
  vi.waitFor(async () => expect((await pull(other, token)).statusCode).toBe(401), { timeout: 1000, interval: 5 });

describe('device tokens cached in each API process', () => {
  it('refuses on the other process, within a second, a phone deleted through the first', async () => {
    const { apiKey, phone } = await phoneOwner(api.app, api.db);
    expect((await pull(other, phone.token)).statusCode).toBe(200);

    const deleted = await api.app.inject({ method: 'DELETE', url: `/api/v1/devices/${phone.id}`, headers: { 'x-api-key': apiKey } });
    expect(deleted.statusCode).toBe(204);

    await phoneRefusedByTheOtherWithinASecond(phone.token);
  });

  it('refuses on both processes, within a second, a token replaced straight in Postgres (as the CLI does)', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    expect([(await pull(api.app, phone.token)).statusCode, (await pull(other, phone.token)).statusCode]).toEqual([200, 200]);
    const userId = (await api.sql.query<{ user_id: string }>('SELECT user_id FROM devices WHERE id = $1', [phone.id])).rows[0]!.user_id;

    const token = await rotateDeviceToken(api.db, { userId, id: phone.id });

    await phoneRefusedByTheOtherWithinASecond(phone.token);
    // The first process hears the announcement on a connection of its own, maybe a moment later.
    await vi.waitFor(async () => expect((await pull(api.app, phone.token)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
    expect((await pull(other, token!)).statusCode).toBe(200);
    expect(await deleteDevice(api.db, { userId, id: phone.id })).toBe(true);
    await phoneRefusedByTheOtherWithinASecond(token!);
  });

  it('reads a known device token from Postgres once, and writes the phone seen once, over many requests', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    const query = vi.spyOn(other.sql, 'query');
    const statements = (pattern: RegExp) => query.mock.calls.filter(([text]) => typeof text === 'string' && pattern.test(text)).length;

    for (let i = 0; i < 5; i++) expect((await pull(other, phone.token)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) {
      const patch = await phoneRequest(other, 'PATCH', '/mobile/v1/message', { authorization: `Bearer ${phone.token}`, body: [] });
      expect(patch.statusCode).toBe(204);
    }

    expect(statements(/FROM devices WHERE token_hash/)).toBe(1);
    expect(statements(/UPDATE devices SET last_seen_at/)).toBeLessThanOrEqual(1);
  });
});

// SMS Gate phones' webhook addresses and signing keys (routes/device-protocols/sms-gate/inbound.ts).
describe('phone webhook addresses cached in each API process', () => {
  async function webhookOf(token: string) {
    const auth = { authorization: `Bearer ${token}` };
    const [webhook] = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
    const signingKey: string = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json().webhooks.signing_key;
    return { path: new URL(webhook.url).pathname, signingKey };
  }
  const ping = (app: FastifyInstance, deviceId: string, path: string, key: string) => {
    const raw = JSON.stringify({ id: 'ping-1', webhookId: 'smsgw-ping', event: 'system:ping', deviceId, payload: { health: { status: 'pass' } } });
    return phoneRequest(app, 'POST', path, { raw, headers: signedHeaders(key, raw) });
  };

  it('reads a known webhook address from Postgres once over many pings', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    const { path, signingKey } = await webhookOf(phone.token);
    const query = vi.spyOn(other.sql, 'query');
    const addressReads = () => query.mock.calls.filter(([text]) => typeof text === 'string' && /signing_key, inbound_secret FROM devices/.test(text)).length;

    for (let i = 0; i < 5; i++) expect((await ping(other, phone.id, path, signingKey)).statusCode).toBe(202);

    expect(addressReads()).toBe(1);
  });

  it('refuses on the other process, within a second, pings signed with a signing key replaced straight in Postgres', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    const { path, signingKey } = await webhookOf(phone.token);
    expect((await ping(other, phone.id, path, signingKey)).statusCode).toBe(202);

    await api.sql.query('UPDATE devices SET signing_key = $2 WHERE id = $1', [phone.id, 'a-new-signing-key-of-the-phone']);

    await vi.waitFor(async () => expect((await ping(other, phone.id, path, signingKey)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
    expect((await ping(other, phone.id, path, 'a-new-signing-key-of-the-phone')).statusCode).toBe(202);
  });

  it('refuses on the other process, within a second, a webhook address whose secret was replaced', async () => {
    const { phone } = await phoneOwner(api.app, api.db);
    const { path, signingKey } = await webhookOf(phone.token);
    expect((await ping(other, phone.id, path, signingKey)).statusCode).toBe(202);

    await api.sql.query('UPDATE devices SET inbound_secret = $2 WHERE id = $1', [phone.id, 'another-secret-of-the-webhook-address']);

    await vi.waitFor(async () => expect((await ping(other, phone.id, path, signingKey)).statusCode).toBe(401), { timeout: 1000, interval: 5 });
  });
});
