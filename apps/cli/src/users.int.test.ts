import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKey, createApiKey, createDevice, createUser, findUserOfLiveKey } from '@smsgw/db';
import { cliDatabase, failure, ok, uniqueName, type CliDatabase } from './testing/run-cli.ts';

let cli: CliDatabase;
beforeAll(async () => {
  cli = await cliDatabase();
});
afterAll(async () => {
  await cli?.close();
});

describe('smsgw user create', () => {
  it('creates a user with a monthly quota and prints {user_id, api_key}; the key authenticates that user', async () => {
    const name = uniqueName('acme');
    const out = ok(await cli.smsgw('user', 'create', '--name', name, '--quota', '50'));

    expect(out).toEqual({ user_id: expect.any(String), api_key: expect.stringMatching(/^smsgw_sk_/) });
    const row = await cli.db.user.findUniqueOrThrow({ where: { id: out.user_id as string } });
    expect({ name: row.name, monthlyQuota: row.monthlyQuota, disabledAt: row.disabledAt }).toEqual({ name, monthlyQuota: 50, disabledAt: null });
    expect((await authenticateApiKey(cli.sql, out.api_key as string))?.user.id).toBe(out.user_id);
  });

  it('leaves the quota to the default of the environment without --quota', async () => {
    const out = ok(await cli.smsgw('user', 'create', '--name', uniqueName('user')));
    expect((await cli.db.user.findUniqueOrThrow({ where: { id: out.user_id as string } })).monthlyQuota).toBeNull();
  });

  it('refuses a name that another user has (exit 4, user_name_taken), creating nothing', async () => {
    const name = uniqueName('taken');
    ok(await cli.smsgw('user', 'create', '--name', name));
    const again = failure(await cli.smsgw('user', 'create', '--name', name, '--quota', '5'));
    expect(again).toEqual({ code: 4, error: 'user_name_taken', message: `A user named "${name}" exists already.` });
    expect(await cli.db.user.count({ where: { name } })).toBe(1);
    expect(await cli.db.apiKey.count({ where: { user: { name } } })).toBe(1);
  });

  it('exits 2 with a usage error when --name is missing, creating nothing', async () => {
    const before = await cli.db.user.count();
    expect(failure(await cli.smsgw('user', 'create', '--quota', '50'))).toEqual({ code: 2, error: 'usage', message: '--name is required' });
    expect(await cli.db.user.count()).toBe(before);
  });

  it.each([[['--quota', '-5']], [['--quota=-5']], [['--quota', 'abc']], [['--quota', '1.5']], [['--qouta', '50']]])(
    'exits 2 with a usage error naming the option for %j, creating nothing',
    async (quota) => {
      const name = uniqueName('bad-quota');
      const result = failure(await cli.smsgw('user', 'create', '--name', name, ...quota));
      expect(result).toMatchObject({ code: 2, error: 'usage', message: expect.stringMatching(/--(quota|qouta)/) });
      expect(await cli.db.user.count({ where: { name } })).toBe(0);
    },
  );
});

// Not concurrent: the total counts every user of the database.
describe('smsgw user list', () => {
  it('lists users newest first, paged like the API ({data, total, limit, offset})', async () => {
    const names = [uniqueName('first'), uniqueName('second')];
    for (const name of names) await createUser(cli.db, { name, monthlyQuota: 7 });
    const total = await cli.db.user.count();

    const out = ok(await cli.smsgw('user', 'list', '--limit', '100'));
    expect(out).toMatchObject({ total, limit: 100, offset: 0 });
    const listed = (out.data as { name: string }[]).map((user) => user.name);
    expect(listed.indexOf(names[1]!)).toBeLessThan(listed.indexOf(names[0]!));
    expect((out.data as object[]).find((user) => (user as { name: string }).name === names[0])).toEqual({
      id: expect.any(String),
      name: names[0],
      monthly_quota: 7,
      disabled: false,
      disabled_at: null,
      created_at: expect.stringMatching(/Z$/),
    });

    const second = ok(await cli.smsgw('user', 'list', '--limit', '1', '--offset', '1'));
    expect(second).toMatchObject({ total, limit: 1, offset: 1, data: [(out.data as object[])[1]] });
  });
});

describe('smsgw user list usage, show', () => {
  it.each([
    ['--limit', '0'],
    ['--limit', '101'],
    ['--offset', '-1'],
  ])('user list refuses %s %s (exit 2)', async (flag, value) => {
    expect(failure(await cli.smsgw('user', 'list', flag, value))).toMatchObject({ code: 2, error: 'usage', message: expect.stringContaining(flag) });
  });

  it('shows a user found by name or by id, with its live API keys and devices', async () => {
    const user = await createUser(cli.db, { name: uniqueName('shown') });
    await createApiKey(cli.db, { userId: user.id, name: 'one' });
    await createDevice(cli.db, { userId: user.id, name: 'phone' });

    const byName = ok(await cli.smsgw('user', 'show', '--user', user.name));
    expect(byName).toEqual({
      id: user.id,
      name: user.name,
      monthly_quota: null,
      disabled: false,
      disabled_at: null,
      created_at: expect.any(String),
      api_keys: 1,
      devices: 1,
    });
    expect(ok(await cli.smsgw('user', 'show', '--user', user.id))).toEqual(byName);
  });

  it.each([
    ['an id of no user', randomUUID()],
    ['a name of no user', 'nobody-at-all'],
  ])('exits 3 (not_found) for %s', async (_what, ref) => {
    expect(failure(await cli.smsgw('user', 'show', '--user', ref))).toEqual({ code: 3, error: 'not_found', message: `no user with id or name ${ref}` });
  });
});

describe('smsgw user disable, enable', () => {
  it('disables a user: its API keys and JWTs are refused until it is enabled again', async () => {
    const user = await createUser(cli.db, { name: uniqueName('disabled') });
    const { key, record } = await createApiKey(cli.db, { userId: user.id, name: 'k' });

    const disabled = ok(await cli.smsgw('user', 'disable', '--user', user.name));
    expect(disabled).toMatchObject({ id: user.id, disabled: true, disabled_at: expect.stringMatching(/Z$/) });
    expect(await authenticateApiKey(cli.sql, key)).toBeNull();
    expect(await findUserOfLiveKey(cli.sql, { userId: user.id, keyId: record.id })).toBeNull();

    // Disabling again keeps the first time.
    expect(ok(await cli.smsgw('user', 'disable', '--user', user.id))).toEqual(disabled);

    expect(ok(await cli.smsgw('user', 'enable', '--user', user.id))).toMatchObject({ id: user.id, disabled: false, disabled_at: null });
    expect((await authenticateApiKey(cli.sql, key))?.user.id).toBe(user.id);
    expect((await findUserOfLiveKey(cli.sql, { userId: user.id, keyId: record.id }))?.id).toBe(user.id);
  });

  it('exits 3 for an unknown user and 2 without --user', async () => {
    expect(failure(await cli.smsgw('user', 'disable', '--user', 'nobody-here'))).toMatchObject({ code: 3, error: 'not_found' });
    expect(failure(await cli.smsgw('user', 'enable'))).toEqual({ code: 2, error: 'usage', message: '--user is required' });
  });
});
