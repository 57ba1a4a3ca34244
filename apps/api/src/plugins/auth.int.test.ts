import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey, createDevice, revokeApiKey } from '@smsgw/db';
import { createTestUser, send, startTestApi, type TestApi } from '../testing/test-api.ts';

// A TTL other than the default, to prove that the token's lifetime comes from the configuration.
const JWT_TTL_SECONDS = 600;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ JWT_TTL_SECONDS: String(JWT_TTL_SECONDS) });
});
afterAll(async () => {
  await api?.close();
});

const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A JWT signed with HMAC: `alg` picks the hash (HS256, HS384, HS512); `none` leaves it unsigned. */
function craftJwt(payload: Record<string, unknown>, options: { secret?: string; alg?: 'HS256' | 'HS384' | 'HS512' | 'none' } = {}): string {
  const alg = options.alg ?? 'HS256';
  const head = `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}`;
  if (alg === 'none') return `${head}.`;
  const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg];
  return `${head}.${createHmac(hash, options.secret ?? api.config.JWT_SECRET)
    .update(head)
    .digest('base64url')}`;
}

function decodePart(jwt: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[index]!, 'base64url').toString('utf8'));
}

function listWith(headers: Record<string, string>) {
  return api.app.inject({ method: 'GET', url: '/api/v1/sms', headers });
}

function issueToken(headers: Record<string, string>) {
  return api.app.inject({ method: 'POST', url: '/api/v1/auth/token', headers });
}

/** A user and a live API key of theirs: the `sub` and `key_id` of a JWT that the service would accept. */
async function liveKey() {
  const { user } = await createTestUser(api.db);
  const { key, record } = await createApiKey(api.db, { userId: user.id, name: 'for a JWT' });
  return { user, key, keyId: record.id };
}

function phone(): string {
  return `+1555${String(randomBytes(4).readUInt32BE(0) % 10_000_000).padStart(7, '0')}`;
}

describe('accepted credentials', () => {
  it('accepts an API key in X-API-Key', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await listWith({ 'x-api-key': apiKey });
    expect(res.statusCode).toBe(200);
  });

  it('accepts an API key as Authorization: Bearer, whatever the case of the scheme', async () => {
    const { apiKey } = await createTestUser(api.db);
    expect((await listWith({ authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
    expect((await listWith({ authorization: `bearer ${apiKey}` })).statusCode).toBe(200);
  });

  it("identifies the key's own user: each user sees only their messages", async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const sent = await send(api.app, alice.apiKey, { recipients: [phone()], body: 'from alice' });
    expect(sent.statusCode).toBe(200);
    expect((await listWith({ authorization: `Bearer ${alice.apiKey}` })).json().total).toBe(1);
    expect((await listWith({ authorization: `Bearer ${bob.apiKey}` })).json().total).toBe(0);
  });

  it('accepts a JWT from POST /api/v1/auth/token on GET /api/v1/sms and on POST /api/sms/send', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const jwt = (await issueToken({ 'x-api-key': apiKey })).json().token as string;
    const to = phone();

    const sent = await api.app.inject({
      method: 'POST',
      url: '/api/sms/send',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { recipients: [to], body: 'sent with a JWT' },
    });
    expect(sent.statusCode).toBe(200);
    const [id] = sent.json().message_ids as string[];
    const row = await api.db.message.findUniqueOrThrow({ where: { id: id! } });
    expect({ userId: row.userId, to: row.to }).toEqual({ userId: user.id, to });

    const listed = await listWith({ authorization: `Bearer ${jwt}` });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((m: { id: string }) => m.id)).toEqual([id]);
    const one = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { authorization: `Bearer ${jwt}` } });
    expect(one.statusCode).toBe(200);
  });

  it('accepts a JWT crafted with the configured secret, HS256, a sub, the key_id of a live key of that user and an exp', async () => {
    // The positive control of the refusals below: only the property under test differs there.
    const { user, keyId } = await liveKey();
    const res = await listWith({ authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, exp: now() + 60 })}` });
    expect(res.statusCode).toBe(200);
  });
});

describe('POST /api/v1/auth/token', () => {
  it('issues an HS256 JWT for the key user and naming the key, that lives JWT_TTL_SECONDS', async () => {
    const { user, key: apiKey, keyId } = await liveKey();
    const before = Date.now();
    const res = await issueToken({ 'x-api-key': apiKey });
    const after = Date.now();

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'expires_in', 'token', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(JWT_TTL_SECONDS);

    expect(decodePart(body.token, 0)).toMatchObject({ alg: 'HS256' });
    const claims = decodePart(body.token, 1) as { sub: string; key_id: string; iat: number; exp: number };
    expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'key_id', 'sub']);
    expect([claims.sub, claims.key_id]).toEqual([user.id, keyId]);
    expect(claims.exp - claims.iat).toBe(JWT_TTL_SECONDS);
    expect(claims.iat).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(claims.iat).toBeLessThanOrEqual(Math.ceil(after / 1000));

    const expiresAt = Date.parse(body.expires_at);
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(expiresAt - claims.exp * 1000)).toBeLessThan(1500);
  });

  it('issues a token to an API key given as bearer too', async () => {
    const { apiKey } = await createTestUser(api.db);
    expect((await issueToken({ authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
  });

  it('refuses a JWT with 403 forbidden: a token cannot renew itself', async () => {
    const { apiKey } = await createTestUser(api.db);
    const jwt = (await issueToken({ 'x-api-key': apiKey })).json().token as string;
    const res = await issueToken({ authorization: `Bearer ${jwt}` });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden', message: 'A JWT can only be obtained with an API key.' });
  });

  it('is 401 without credentials', async () => {
    const res = await issueToken({});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED);
  });
});

/**
 * A change written straight to Postgres, as the CLI or another API process writes it, reaches this
 * process's credential cache through Postgres's announcement, within a second.
 */
async function refusedWithinASecond(headers: Record<string, string>) {
  await vi.waitFor(async () => expect((await listWith(headers)).statusCode).toBe(401), { timeout: 1000, interval: 10 });
  await expectUnauthorized(headers);
}

/** Both a read and a send answer exactly the 401 body. */
async function expectUnauthorized(headers: Record<string, string>) {
  for (const res of [
    await listWith(headers),
    await api.app.inject({ method: 'POST', url: '/api/sms/send', headers, payload: { recipients: [phone()], body: 'hi' } }),
  ]) {
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
  }
}

describe('refused credentials: 401 with exactly {"error":"unauthorized","message":"Authentication required"}', () => {
  it('refuses a request without credentials', async () => {
    await expectUnauthorized({});
  });

  it('refuses an unknown API key, as X-API-Key and as bearer', async () => {
    const unknown = `smsgw_sk_${randomBytes(32).toString('base64url')}`;
    await expectUnauthorized({ 'x-api-key': unknown });
    await expectUnauthorized({ authorization: `Bearer ${unknown}` });
  });

  it('refuses a real key with a character more or a character less', async () => {
    const { apiKey } = await createTestUser(api.db);
    await expectUnauthorized({ 'x-api-key': `${apiKey}x` });
    await expectUnauthorized({ 'x-api-key': apiKey.slice(0, -1) });
  });

  it('refuses a revoked API key, while another key of the same user keeps working', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const { key: revoked, record } = await createApiKey(api.db, { userId: user.id, name: 'to revoke' });
    expect((await listWith({ 'x-api-key': revoked })).statusCode).toBe(200);
    expect(await revokeApiKey(api.db, { userId: user.id, id: record.id })).toBe(true);

    await refusedWithinASecond({ 'x-api-key': revoked });
    await expectUnauthorized({ authorization: `Bearer ${revoked}` });
    expect((await listWith({ 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it('refuses a device token: devices cannot use user endpoints', async () => {
    const { user } = await createTestUser(api.db, { devices: 0 });
    const { token } = await createDevice(api.db, { userId: user.id, name: 'phone' });
    await expectUnauthorized({ 'x-api-key': token });
    await expectUnauthorized({ authorization: `Bearer ${token}` });
  });

  it.each([
    ['the scheme alone', 'Bearer'],
    ['the scheme and a space', 'Bearer '],
    ['Basic credentials', `Basic ${Buffer.from('user:password').toString('base64')}`],
    ['a token without a scheme', 'smsgw_sk_abc'],
    ['two tokens', 'Bearer a b'],
    ['three dot-separated garbage parts', 'Bearer a.b.c'],
    ['a JWT-looking token of random bytes', `Bearer ${b64url(randomBytes(12))}.${b64url(randomBytes(24))}.${b64url(randomBytes(32))}`],
  ])('refuses a malformed Authorization header: %s', async (_name, authorization) => {
    await expectUnauthorized({ authorization });
  });

  it('refuses a JWT signed with another secret', async () => {
    const { user, keyId } = await liveKey();
    await expectUnauthorized({
      authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, exp: now() + 60 }, { secret: randomBytes(32).toString('base64') })}`,
    });
  });

  it('refuses an unsigned JWT (alg none)', async () => {
    const { user, keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, exp: now() + 60 }, { alg: 'none' })}` });
  });

  it.each(['HS384', 'HS512'] as const)('refuses a JWT signed with %s and the right secret: the algorithm is pinned', async (alg) => {
    const { user, keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, exp: now() + 60 }, { alg })}` });
  });

  it('refuses an expired JWT', async () => {
    const { user, keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, iat: now() - 120, exp: now() - 60 })}` });
  });

  it('refuses a JWT without exp', async () => {
    const { user, keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub: user.id, key_id: keyId, iat: now() })}` });
  });

  it('refuses a JWT without sub', async () => {
    const { keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ key_id: keyId, exp: now() + 60 })}` });
  });

  it('refuses a JWT whose sub is a user that does not exist', async () => {
    const { keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub: randomUUID(), key_id: keyId, exp: now() + 60 })}` });
  });

  it.each([
    ['not a uuid', 'admin'],
    ['a number', 42],
  ])('refuses a JWT whose sub is %s', async (_name, sub) => {
    const { keyId } = await liveKey();
    await expectUnauthorized({ authorization: `Bearer ${craftJwt({ sub, key_id: keyId, exp: now() + 60 })}` });
  });

  it('refuses a JWT of the service whose payload was swapped for another user', async () => {
    const { apiKey } = await createTestUser(api.db);
    const jwt = (await issueToken({ 'x-api-key': apiKey })).json().token as string;
    const [head, , signature] = jwt.split('.');
    const other = await createTestUser(api.db);
    const otherKey = await api.db.apiKey.findFirstOrThrow({ where: { userId: other.user.id } });
    const tampered = `${head}.${b64url({ sub: other.user.id, key_id: otherKey.id, exp: now() + 60, iat: now() })}.${signature}`;
    await expectUnauthorized({ authorization: `Bearer ${tampered}` });
  });
});

describe('a JWT lives only as long as its API key (revoking the key ends it)', () => {
  const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });
  const createKeyWith = (jwt: string) =>
    api.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(jwt), payload: { name: 'made with a JWT' } });

  it('refuses the JWTs of a revoked key, on reads and on sends, while a JWT of another key of the user keeps working', async () => {
    const { user, key, keyId } = await liveKey();
    const other = await createApiKey(api.db, { userId: user.id, name: 'kept' });
    const doomed = (await issueToken({ 'x-api-key': key })).json().token as string;
    const kept = (await issueToken({ 'x-api-key': other.key })).json().token as string;
    expect((await listWith(bearer(doomed))).statusCode).toBe(200);

    expect(await revokeApiKey(api.db, { userId: user.id, id: keyId })).toBe(true);

    await refusedWithinASecond(bearer(doomed));
    expect((await listWith(bearer(kept))).statusCode).toBe(200);
  });

  it('lets the JWT of a live key create an API key, and the JWT of a revoked one not', async () => {
    const { user, key, keyId } = await liveKey();
    const jwt = (await issueToken({ 'x-api-key': key })).json().token as string;
    expect((await createKeyWith(jwt)).statusCode).toBe(201);

    const revoked = await api.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${keyId}`, headers: bearer(jwt) });
    expect(revoked.statusCode).toBe(204);

    const res = await createKeyWith(jwt);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    expect(await api.db.apiKey.count({ where: { userId: user.id, revokedAt: null } })).toBe(2);
  });

  it('refuses a JWT without key_id, as the service issued them before the claim existed', async () => {
    const { user } = await liveKey();
    await expectUnauthorized(bearer(craftJwt({ sub: user.id, iat: now(), exp: now() + 60 })));
  });

  it('refuses a JWT whose key_id is a live key of another user', async () => {
    const { user } = await liveKey();
    const other = await liveKey();
    await expectUnauthorized(bearer(craftJwt({ sub: user.id, key_id: other.keyId, exp: now() + 60 })));
  });

  it.each([
    ['not a uuid', 'key'],
    ['a number', 7],
    ['an id that is no key', randomUUID()],
  ])('refuses a JWT whose key_id is %s', async (_name, keyId) => {
    const { user } = await liveKey();
    await expectUnauthorized(bearer(craftJwt({ sub: user.id, key_id: keyId, exp: now() + 60 })));
  });
});
