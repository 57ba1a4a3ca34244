import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createTestUser, send, uniquePhone } from '@smsgw/api/testing';
import { cliOnApi, failure, ok } from './testing/run-cli.ts';

const cli = cliOnApi({ MONTHLY_QUOTA_DEFAULT: '300' });
const { smsgw } = cli;
const monthlyQuota = async (userId: string) => (await cli.api.db.user.findUniqueOrThrow({ where: { id: userId } })).monthlyQuota;

describe('smsgw quota show', () => {
  it('shows the figures of GET /api/v1/quota, and whether the limit is the default of the environment', async () => {
    const user = await createTestUser(cli.api.db, { monthlyQuota: 50 });
    await send(cli.api.app, user.apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'hi' });

    const out = ok(await smsgw('quota', 'show', '--user', user.user.name));
    const { period, limit, used, remaining, resets_at } = (await call(cli.api.app, user.apiKey, 'GET', '/api/v1/quota')).json();
    expect(out).toEqual({ user_id: user.userId, period, limit, limit_is_default: false, used, remaining, resets_at });
    expect(out).toMatchObject({ limit: 50, used: 2, remaining: 48 });

    const other = await createTestUser(cli.api.db, { devices: 0 });
    expect(ok(await smsgw('quota', 'show', '--user', other.userId))).toMatchObject({ limit: 300, limit_is_default: true, used: 0, remaining: 300 });
  });
});

describe('smsgw quota set', () => {
  it("changes the user's monthly limit, which the API applies, and prints {user_id, limit}", async () => {
    const user = await createTestUser(cli.api.db, { monthlyQuota: 50 });
    expect(ok(await smsgw('quota', 'set', '--user', user.userId, '--limit', '75'))).toEqual({ user_id: user.userId, limit: 75 });
    expect((await call(cli.api.app, user.apiKey, 'GET', '/api/v1/quota')).json()).toMatchObject({ limit: 75 });
  });

  it('accepts a limit of 0, and `default` returns the user to MONTHLY_QUOTA_DEFAULT', async () => {
    const user = await createTestUser(cli.api.db, { monthlyQuota: 50 });
    ok(await smsgw('quota', 'set', '--user', user.userId, '--limit', '0'));
    expect(await monthlyQuota(user.userId)).toBe(0);
    expect(ok(await smsgw('quota', 'set', '--user', user.userId, '--limit', 'default'))).toEqual({ user_id: user.userId, limit: null });
    expect((await call(cli.api.app, user.apiKey, 'GET', '/api/v1/quota')).json()).toMatchObject({ limit: 300 });
  });

  it.each([[[] as string[]], [['--limit', '-1']], [['--limit', 'lots']]])('exits 2 with %j, leaving the limit as it was', async (args) => {
    const user = await createTestUser(cli.api.db, { monthlyQuota: 50, devices: 0 });
    expect(failure(await smsgw('quota', 'set', '--user', user.userId, ...args))).toMatchObject({
      code: 2,
      error: 'usage',
      message: expect.stringContaining('--limit'),
    });
    expect(await monthlyQuota(user.userId)).toBe(50);
  });

  it('exits 3 for an unknown user', async () => {
    const user = randomUUID();
    expect(failure(await smsgw('quota', 'set', '--user', user, '--limit', '10'))).toEqual({
      code: 3,
      error: 'not_found',
      message: `no user with id or name ${user}`,
    });
  });
});
