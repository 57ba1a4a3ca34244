import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '@smsgw/db';
import { createTestUser, uniquePhone as phone, type TestApi, type TestUser, startTestApi } from '../../../testing/test-api.ts';
import { newerClient, publishedClient, refreshToken } from '../../../testing/sms-gate-client.ts';
import { ROUTE_SCOPES } from '../../../plugins/scopes.ts';

/**
 * SMS Gate's tokens and scopes (`/3rdparty/v1/auth/token`) against a listening smsgw: the published
 * library where it has the call (any call, with a token as its Basic password), the newer client's
 * `generateToken`/`revokeToken` and client-go's `RefreshToken` raw, as they send them.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const message = () => ({ textMessage: { text: 'scoped' }, phoneNumbers: [phone()] });
const forbidden = (scope: string) => `HTTP error 403: {"message":"scope required: ${scope}"}`;
const unauthorized = 'HTTP error 401: {"message":"Unauthorized"}';

async function tokenFor(u: TestUser, scopes: string[], ttl?: number) {
  return newerClient(baseUrl, u.user.name, u.apiKey).generateToken({ scopes, ...(ttl !== undefined && { ttl }) });
}

describe('SMS Gate tokens', () => {
  it('issues a pair with the scopes asked, the access lifetime capped at JWT_TTL_SECONDS', async () => {
    const u = await createTestUser(api.db);
    const before = Date.now();
    const pair = await tokenFor(u, ['messages:send', 'messages:read'], 600);
    expect(pair).toEqual({
      id: expect.any(String),
      token_type: 'Bearer',
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(claims(pair.access_token)).toMatchObject({ jti: pair.id, sub: u.userId, user_id: u.userId, scopes: ['messages:send', 'messages:read'] });
    expect(claims(pair.refresh_token)).toMatchObject({ sub: u.userId, scopes: ['tokens:refresh'], original_scopes: ['messages:send', 'messages:read'] });
    const lifetime = (iso: string) => Math.round((new Date(iso).getTime() - before) / 1000);
    expect(lifetime(pair.expires_at)).toBeGreaterThanOrEqual(599);
    expect(lifetime(pair.expires_at)).toBeLessThanOrEqual(601);
    expect(lifetime((await tokenFor(u, ['all:any'], 100_000)).expires_at)).toBeLessThanOrEqual(api.config.JWT_TTL_SECONDS + 1);
    expect(lifetime((await tokenFor(u, ['all:any'])).expires_at)).toBeGreaterThanOrEqual(api.config.JWT_TTL_SECONDS - 1);
  });

  it('lets a token do what its scopes grant and refuses the rest with 403, before reading the body', async () => {
    const u = await createTestUser(api.db);
    const { access_token: token } = await tokenFor(u, ['messages:send']);
    const bearer = newerClient(baseUrl, '', token);
    const sent = await bearer.send(message());
    expect(sent.state).toBe('Pending');
    await expect(bearer.getState(sent.id)).rejects.toThrow(forbidden('messages:read'));
    expect((await bearer.listMessages()).status).toBe(403);
    // The published library, with the token as its Basic password.
    await expect(publishedClient(baseUrl, u.user.name, token).getDevices()).rejects.toThrow(forbidden('devices:list'));
    const { access_token: reader } = await tokenFor(u, ['messages:read', 'devices:list']);
    await expect(newerClient(baseUrl, '', reader).send({ phoneNumbers: [] })).rejects.toThrow(forbidden('messages:send'));
    const unreadable = await fetch(`${baseUrl}/3rdparty/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/json' },
      body: '{',
    });
    expect([unreadable.status, await unreadable.json()]).toEqual([403, { message: 'scope required: messages:send' }]);
    expect(await publishedClient(baseUrl, u.user.name, reader).getDevices()).toHaveLength(1);
    expect((await newerClient(baseUrl, '', reader).getState(sent.id)).id).toBe(sent.id);
    expect(await api.db.message.count({ where: { userId: u.userId } })).toBe(1);
  });

  it('refreshes once: a new pair, the old access token and a replayed refresh token 401', async () => {
    const u = await createTestUser(api.db);
    const first = await tokenFor(u, ['messages:send']);
    const second = await refreshToken(baseUrl, first.refresh_token);
    expect(second.id).not.toBe(first.id);
    expect(claims(second.access_token)).toMatchObject({ scopes: ['messages:send'] });
    await expect(refreshToken(baseUrl, first.refresh_token)).rejects.toThrow(unauthorized);
    await expect(newerClient(baseUrl, '', first.access_token).send(message())).rejects.toThrow(unauthorized);
    expect((await newerClient(baseUrl, '', second.access_token).send(message())).state).toBe('Pending');
    expect((await refreshToken(baseUrl, second.refresh_token)).token_type).toBe('Bearer');
    // Only a refresh token refreshes; a refresh token does nothing else.
    const third = await tokenFor(u, ['all:any']);
    await expect(refreshToken(baseUrl, third.access_token)).rejects.toThrow(forbidden('tokens:refresh'));
    await expect(refreshToken(baseUrl, u.apiKey)).rejects.toThrow(forbidden('tokens:refresh'));
    await expect(newerClient(baseUrl, '', third.refresh_token).send(message())).rejects.toThrow(forbidden('messages:send'));
  });

  it('lets one of two concurrent refreshes of a token win; the other is 401 and stores nothing', async () => {
    const u = await createTestUser(api.db);
    const pair = await tokenFor(u, ['messages:read']);
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => refreshToken(baseUrl, pair.refresh_token)));
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual(Array(3).fill(`Error: ${unauthorized}`));
    expect(await api.db.scopedToken.count({ where: { userId: u.userId } })).toBe(4);
  });

  it("revokes by jti: the access token and its refresh token 401, another user's jti untouched", async () => {
    const u = await createTestUser(api.db);
    const pair = await tokenFor(u, ['messages:send', 'tokens:manage']);
    const other = await createTestUser(api.db);
    await expect(newerClient(baseUrl, other.user.name, other.apiKey).revokeToken(pair.id)).resolves.toBeNull();
    expect((await newerClient(baseUrl, '', pair.access_token).send(message())).state).toBe('Pending');

    await expect(newerClient(baseUrl, '', pair.access_token).revokeToken(pair.id)).resolves.toBeNull();
    await expect(newerClient(baseUrl, '', pair.access_token).send(message())).rejects.toThrow(unauthorized);
    await expect(refreshToken(baseUrl, pair.refresh_token)).rejects.toThrow(unauthorized);
    await expect(newerClient(baseUrl, u.user.name, u.apiKey).revokeToken('not-a-token')).resolves.toBeNull();
  });

  it('ends the tokens of a revoked API key', async () => {
    const u = await createTestUser(api.db);
    const pair = await tokenFor(u, ['messages:send']);
    const key = await api.db.apiKey.findFirstOrThrow({ where: { userId: u.userId } });
    await revokeApiKey(api.db, { userId: u.userId, id: key.id });
    await expect(newerClient(baseUrl, '', pair.access_token).send(message())).rejects.toThrow(unauthorized);
    await expect(refreshToken(baseUrl, pair.refresh_token)).rejects.toThrow(unauthorized);
  });

  it('refuses unknown scopes (400) and a scoped token granting more than it holds (403)', async () => {
    const u = await createTestUser(api.db);
    await expect(tokenFor(u, ['messages:send', 'messages:delete'])).rejects.toThrow('HTTP error 400: {"message":"unknown scope: messages:delete"}');
    await expect(tokenFor(u, [])).rejects.toThrow('HTTP error 400');
    await expect(tokenFor(u, ['messages:send'], -1)).rejects.toThrow('HTTP error 400');
    const { access_token: manager } = await tokenFor(u, ['tokens:manage', 'messages:send']);
    const managed = newerClient(baseUrl, '', manager);
    await expect(managed.generateToken({ scopes: ['all:any'] })).rejects.toThrow(forbidden('all:any'));
    await expect(managed.generateToken({ scopes: ['messages:send', 'messages:list'] })).rejects.toThrow(forbidden('messages:list'));
    expect(claims((await managed.generateToken({ scopes: ['messages:send'] })).access_token).scopes).toEqual(['messages:send']);
    const { access_token: sender } = await tokenFor(u, ['messages:send']);
    await expect(newerClient(baseUrl, '', sender).generateToken({ scopes: ['messages:send'] })).rejects.toThrow(forbidden('tokens:manage'));
  });
});

describe("scopes on smsgw's own API", () => {
  it('names only routes that exist in its table (a misspelt one would fall back to all:any unnoticed)', () => {
    const missing = [...ROUTE_SCOPES.keys()].filter((key) => {
      const [method, url] = key.split(' ') as [string, string];
      return !api.app.hasRoute({ method: method as 'GET', url });
    });
    expect(missing).toEqual([]);
  });

  const call = async (token: string, method: string, url: string, payload?: object) => {
    const response = await api.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };

  it('holds a scoped token to its scopes, and every other credential to none', async () => {
    const u = await createTestUser(api.db);
    const { access_token: sender } = await tokenFor(u, ['messages:send']);
    expect((await call(sender, 'POST', '/api/sms/send', { recipients: [phone()], body: 'own API' })).status).toBe(200);
    expect(await call(sender, 'GET', '/api/v1/devices')).toEqual({ status: 403, body: { error: 'forbidden', message: 'scope required: devices:list' } });
    expect(await call(sender, 'GET', '/api/v1/sms')).toMatchObject({ status: 403, body: { message: 'scope required: messages:list' } });
    // Routes without an SMS Gate counterpart need all:any.
    expect(await call(sender, 'GET', '/api/v1/contacts')).toMatchObject({ status: 403, body: { message: 'scope required: all:any' } });
    expect(await call(sender, 'POST', '/api/v1/api-keys', { name: 'escalate' })).toMatchObject({ status: 403, body: { message: 'scope required: all:any' } });
    expect(await api.db.apiKey.count({ where: { userId: u.userId } })).toBe(1);

    const { access_token: lister } = await tokenFor(u, ['devices:list', 'messages:list']);
    expect((await call(lister, 'GET', '/api/v1/devices')).status).toBe(200);
    expect((await call(lister, 'GET', '/api/v1/sms')).status).toBe(200);
    expect((await call(lister, 'POST', '/api/sms/send', { recipients: [phone()], body: 'no' })).body).toMatchObject({
      message: 'scope required: messages:send',
    });

    const { access_token: all } = await tokenFor(u, ['all:any']);
    expect((await call(all, 'GET', '/api/v1/contacts')).status).toBe(200);
    // API keys and the console's JWTs (no scopes claim) keep full access.
    expect((await call(u.apiKey, 'GET', '/api/v1/contacts')).status).toBe(200);
    const { token: consoleJwt } = api.app.issueToken({
      user: u.user,
      method: 'api_key',
      apiKeyId: (await api.db.apiKey.findFirstOrThrow({ where: { userId: u.userId } })).id,
    });
    expect((await call(consoleJwt, 'GET', '/api/v1/contacts')).status).toBe(200);
  });
});
