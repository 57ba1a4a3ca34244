import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createTestUser } from '@smsgw/api/testing';
import { createApiKey } from '@smsgw/db';
import { cliOnApi, failure, ok } from './testing/run-cli.ts';

// The CLI against the database of a running API: what it does to keys shows in the API's answers.
const cli = cliOnApi();
const { smsgw } = cli;

describe('smsgw key create, list', () => {
  it('creates another API key of the user (found by name) and prints {api_key, key_id}; the API takes it', async () => {
    const { user, apiKey: first } = await createTestUser(cli.api.db, { devices: 0 });
    const out = ok(await smsgw('key', 'create', '--user', user.name, '--name', 'deploys'));

    expect(out).toEqual({ api_key: expect.stringMatching(/^smsgw_sk_/), key_id: expect.any(String) });
    expect(out.api_key).not.toBe(first);
    const listed = await call(cli.api.app, out.api_key as string, 'GET', '/api/v1/api-keys');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((key: { id: string; name: string }) => [key.id, key.name])).toContainEqual([out.key_id, 'deploys']);
  });

  it("lists the user's keys as GET /api/v1/api-keys does", async () => {
    const { user, apiKey } = await createTestUser(cli.api.db, { devices: 0 });
    await createApiKey(cli.api.db, { userId: user.id, name: 'second' });

    const out = ok(await smsgw('key', 'list', '--user', user.id));
    const fromApi = (await call(cli.api.app, apiKey, 'GET', '/api/v1/api-keys')).json();
    // The API's request just marked its key as used: compare before that.
    expect(out).toEqual({ data: fromApi.data.map((key: { last_used_at: string | null }) => ({ ...key, last_used_at: null })) });
    expect((out.data as unknown[]).length).toBe(2);
  });

  it.each([
    ['an id of no user', () => randomUUID()],
    ['a malformed id', () => 'not-a-uuid'],
  ])('exits 3 with a JSON error naming the user for %s', async (_name, id) => {
    const user = id();
    expect(failure(await smsgw('key', 'create', '--user', user))).toEqual({ code: 3, error: 'not_found', message: `no user with id or name ${user}` });
  });

  it('exits 2 when --user is missing', async () => {
    expect(failure(await smsgw('key', 'list'))).toEqual({ code: 2, error: 'usage', message: '--user is required' });
  });
});

describe('smsgw key revoke', () => {
  it('revokes a key: the API refuses it (401) within a second, the user’s other key still works', async () => {
    const { user, apiKey } = await createTestUser(cli.api.db, { devices: 0 });
    const other = await createApiKey(cli.api.db, { userId: user.id, name: 'other' });
    expect((await call(cli.api.app, other.key, 'GET', '/api/v1/quota')).statusCode).toBe(200);

    const out = ok(await smsgw('key', 'revoke', '--user', user.id, '--key', other.record.id));
    expect(out).toMatchObject({ id: other.record.id, name: 'other', revoked_at: expect.stringMatching(/Z$/) });

    // The CLI is another process: the API hears of the revocation from Postgres (docs/http-api.md).
    await expect.poll(async () => (await call(cli.api.app, other.key, 'GET', '/api/v1/quota')).statusCode, { timeout: 1000, interval: 20 }).toBe(401);
    const refused = await call(cli.api.app, other.key, 'GET', '/api/v1/quota');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: 'unauthorized' });
    expect((await call(cli.api.app, apiKey, 'GET', '/api/v1/quota')).statusCode).toBe(200);

    // Revoking again keeps the first revocation, as DELETE /api/v1/api-keys/:id does.
    expect(ok(await smsgw('key', 'revoke', '--user', user.id, '--key', other.record.id))).toEqual(out);
  });

  it("exits 3 for another user's key, a malformed id, and changes nothing", async () => {
    const owner = await createTestUser(cli.api.db, { devices: 0 });
    const { user } = await createTestUser(cli.api.db, { devices: 0 });
    const theirs = (await cli.api.db.apiKey.findFirstOrThrow({ where: { userId: owner.userId } })).id;

    for (const id of [theirs, 'not-a-uuid']) {
      expect(failure(await smsgw('key', 'revoke', '--user', user.id, '--key', id))).toEqual({
        code: 3,
        error: 'not_found',
        message: `no API key with id ${id} for user ${user.id}`,
      });
    }
    expect((await call(cli.api.app, owner.apiKey, 'GET', '/api/v1/quota')).statusCode).toBe(200);
  });

  it('exits 2 without --key', async () => {
    const { user } = await createTestUser(cli.api.db, { devices: 0 });
    expect(failure(await smsgw('key', 'revoke', '--user', user.id))).toEqual({ code: 2, error: 'usage', message: '--key is required' });
  });
});
