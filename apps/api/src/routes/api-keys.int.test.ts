import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@smsgw/core';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEY = /^smsgw_sk_[A-Za-z0-9_-]{43}$/;
const NOT_FOUND = { error: 'not_found', message: 'API key not found' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

function createKey(apiKey: string, payload: unknown) {
  return api.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': apiKey }, payload: payload as object });
}
function listKeys(apiKey: string) {
  return api.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: { 'x-api-key': apiKey } });
}
function revokeKey(apiKey: string, id: string) {
  return api.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: { 'x-api-key': apiKey } });
}
async function works(apiKey: string): Promise<boolean> {
  const res = await api.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { authorization: `Bearer ${apiKey}` } });
  return res.statusCode === 200;
}

describe('POST /api/v1/api-keys', () => {
  it('creates a key, shows it once with the smsgw_sk_ prefix, and the key works', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const res = await createKey(apiKey, { name: 'ci deploys' });

    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String),
      name: 'ci deploys',
      prefix: created.key.slice(0, 15),
      created_at: expect.stringMatching(ISO_MS),
      last_used_at: null,
      revoked_at: null,
      key: expect.stringMatching(KEY),
    });
    expect(created.prefix.startsWith('smsgw_sk_')).toBe(true);
    expect(await works(created.key)).toBe(true);

    const row = await api.db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.userId).toBe(user.id);
    // Only the SHA-256 of the key is stored.
    expect(Buffer.from(row.hash).equals(createHash('sha256').update(created.key).digest())).toBe(true);
  });

  it('lists the new key afterwards without the key itself', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = (await createKey(apiKey, { name: 'listed' })).json();

    const res = await listKeys(apiKey);
    expect(res.statusCode).toBe(200);
    const listed = res.json().data.find((k: { id: string }) => k.id === created.id);
    const { key: _key, ...withoutKey } = created;
    expect(listed).toEqual(withoutKey);
    expect(JSON.stringify(res.json())).not.toContain(created.key);
  });

  it('gives every key a different secret', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = (await createKey(apiKey, { name: 'same name' })).json();
    const b = (await createKey(apiKey, { name: 'same name' })).json();
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it.each([
    ['the name is missing', {}, 'name'],
    ['the name is empty', { name: '' }, 'name'],
    ['the name is longer than 100 characters', { name: 'n'.repeat(101) }, 'name'],
    ['the name is a number', { name: 7 }, 'name'],
    ['a field is unknown', { name: 'x', scopes: ['send'] }, 'scopes'],
  ])('refuses with 400 invalid_request when %s, creating nothing', async (_name, payload, field) => {
    const { apiKey, user } = await createTestUser(api.db);
    const res = await createKey(apiKey, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(field) });
    expect(await api.db.apiKey.count({ where: { userId: user.id } })).toBe(1);
  });

  it('is 401 without credentials', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x' } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

describe('GET /api/v1/api-keys', () => {
  it("lists only the caller's own keys, newest first", async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const first = (await createKey(alice.apiKey, { name: 'alice 1' })).json();
    const second = (await createKey(alice.apiKey, { name: 'alice 2' })).json();
    const bobs = (await createKey(bob.apiKey, { name: 'bob 1' })).json();

    const aliceKeys = (await listKeys(alice.apiKey)).json().data as { id: string; name: string }[];
    expect(aliceKeys.map((k) => k.name)).toEqual(['alice 2', 'alice 1', 'test']);
    expect(aliceKeys.map((k) => k.id)).toContain(first.id);
    expect(aliceKeys.map((k) => k.id)).toContain(second.id);
    expect(aliceKeys.map((k) => k.id)).not.toContain(bobs.id);

    const bobKeys = (await listKeys(bob.apiKey)).json().data as { name: string }[];
    expect(bobKeys.map((k) => k.name)).toEqual(['bob 1', 'test']);
  });

  it('shows when a key was last used', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = (await createKey(apiKey, { name: 'used' })).json();
    expect(await works(created.key)).toBe(true);
    const listed = (await listKeys(apiKey)).json().data.find((k: { id: string }) => k.id === created.id);
    expect(listed.last_used_at).toMatch(ISO_MS);
  });
});

describe('DELETE /api/v1/api-keys/:id', () => {
  it('revokes a key: 204 with no body, the key then gets 401, and the listing shows revoked_at', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = (await createKey(apiKey, { name: 'to revoke' })).json();
    expect(await works(created.key)).toBe(true);

    const res = await revokeKey(apiKey, created.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    const refused = await api.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': created.key } });
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    const listed = (await listKeys(apiKey)).json().data.find((k: { id: string }) => k.id === created.id);
    expect(listed.revoked_at).toMatch(ISO_MS);
    // The key that revoked it is untouched.
    expect(await works(apiKey)).toBe(true);
  });

  it('revoking twice is 204 again and keeps the first revocation time', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = (await createKey(apiKey, { name: 'twice' })).json();
    expect((await revokeKey(apiKey, created.id)).statusCode).toBe(204);
    const first = (await api.db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt;
    expect((await revokeKey(apiKey, created.id)).statusCode).toBe(204);
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt).toEqual(first);
  });

  it('lets a key revoke itself; it is refused from then on', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const [own] = await api.db.apiKey.findMany({ where: { userId: user.id } });
    expect((await revokeKey(apiKey, own!.id)).statusCode).toBe(204);
    expect(await works(apiKey)).toBe(false);
  });

  it("answers 404 for another user's key, which keeps working", async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const bobs = (await createKey(bob.apiKey, { name: 'bob' })).json();

    const res = await revokeKey(alice.apiKey, bobs.id);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 404, body: NOT_FOUND });
    expect(await works(bobs.key)).toBe(true);
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: bobs.id } })).revokedAt).toBeNull();
  });

  it.each([['not-a-uuid'], ['12345'], [newId()]])('answers 404 for the id %j, malformed or unknown', async (id) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await revokeKey(apiKey, id);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 404, body: NOT_FOUND });
  });

  it('is 401 without credentials and revokes nothing', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const [own] = await api.db.apiKey.findMany({ where: { userId: user.id } });
    const res = await api.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${own!.id}` });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    expect(await works(apiKey)).toBe(true);
  });
});
