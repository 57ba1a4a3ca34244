import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { authenticateApiKey, createDb, type Db } from '@smsgw/db';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  db = createDb({ url: database.url, poolSize: 2 });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `smsgw <args>` as the operator would, against this file's database. */
async function smsgw(...args: string[]): Promise<CliResult> {
  try {
    // The bundle that `pnpm smsgw` runs (built by the global setup).
    const { stdout, stderr } = await run(process.execPath, ['dist/cli.mjs', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: database.url },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function json(text: string): Record<string, unknown> {
  return JSON.parse(text.trim());
}

const uniqueName = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

/** A user made by the CLI itself. */
async function cliUser(quota?: number): Promise<{ user_id: string; api_key: string }> {
  const result = await smsgw('user', 'create', '--name', uniqueName('user'), ...(quota === undefined ? [] : ['--quota', String(quota)]));
  expect(result.code).toBe(0);
  return json(result.stdout) as { user_id: string; api_key: string };
}

describe('smsgw user create', () => {
  it('creates a user with a monthly quota and prints {user_id, api_key}; the key authenticates that user', async () => {
    const name = uniqueName('acme');
    const result = await smsgw('user', 'create', '--name', name, '--quota', '50');

    expect(result.code).toBe(0);
    const out = json(result.stdout);
    expect(out).toEqual({ user_id: expect.any(String), api_key: expect.stringMatching(/^smsgw_sk_/) });
    const row = await db.user.findUniqueOrThrow({ where: { id: out.user_id as string } });
    expect({ name: row.name, monthlyQuota: row.monthlyQuota }).toEqual({ name, monthlyQuota: 50 });
    const authenticated = await authenticateApiKey(db, out.api_key as string);
    expect(authenticated?.user.id).toBe(out.user_id);
  });

  it('leaves the quota to the default of the environment without --quota', async () => {
    const { user_id } = await cliUser();
    expect((await db.user.findUniqueOrThrow({ where: { id: user_id } })).monthlyQuota).toBeNull();
  });

  it('exits 1 with a JSON error on stderr when --name is missing, creating nothing', async () => {
    const before = await db.user.count();
    const result = await smsgw('user', 'create', '--quota', '50');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(json(result.stderr)).toEqual({ error: '--name is required' });
    expect(await db.user.count()).toBe(before);
  });

  it.each([[['--quota', '-5']], [['--quota=-5']], [['--quota', 'abc']], [['--quota', '1.5']]])(
    'exits 1 with a JSON error for %j, creating nothing',
    async (quota) => {
      const name = uniqueName('bad-quota');
      const result = await smsgw('user', 'create', '--name', name, ...quota);
      expect(result.code).toBe(1);
      expect(json(result.stderr)).toEqual({ error: expect.stringContaining('--quota') });
      expect(await db.user.count({ where: { name } })).toBe(0);
    },
  );

  it('exits 1 with a JSON error naming an unknown option, creating nothing', async () => {
    const name = uniqueName('typo');
    const result = await smsgw('user', 'create', '--name', name, '--qouta', '50');
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: expect.stringContaining("'--qouta'") });
    expect(await db.user.count({ where: { name } })).toBe(0);
  });
});

describe.concurrent('smsgw key create', () => {
  it('creates another API key of the user and prints {api_key, key_id}', async () => {
    const { user_id, api_key: first } = await cliUser();
    const result = await smsgw('key', 'create', '--user', user_id, '--name', 'deploys');

    expect(result.code).toBe(0);
    const out = json(result.stdout);
    expect(out).toEqual({ api_key: expect.stringMatching(/^smsgw_sk_/), key_id: expect.any(String) });
    expect(out.api_key).not.toBe(first);
    expect((await authenticateApiKey(db, out.api_key as string))?.user.id).toBe(user_id);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: out.key_id as string } });
    expect({ userId: row.userId, name: row.name }).toEqual({ userId: user_id, name: 'deploys' });
  });

  it.each([
    ['an id of no user', () => randomUUID()],
    ['a malformed id', () => 'not-a-uuid'],
  ])('exits 1 with a JSON error naming the user for %s', async (_name, id) => {
    const user = id();
    const result = await smsgw('key', 'create', '--user', user);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(json(result.stderr)).toEqual({ error: `no user with id ${user}` });
  });

  it('exits 1 when --user is missing', async () => {
    const result = await smsgw('key', 'create');
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: '--user is required' });
  });
});

describe.concurrent('smsgw device create', () => {
  it('registers a device of the user and prints {device_id, device_token}', async () => {
    const { user_id } = await cliUser();
    const result = await smsgw('device', 'create', '--user', user_id, '--name', 'Pixel 8');

    expect(result.code).toBe(0);
    const out = json(result.stdout);
    expect(out).toEqual({ device_id: expect.any(String), device_token: expect.stringMatching(/^smsgw_dt_/) });
    const row = await db.device.findUniqueOrThrow({ where: { id: out.device_id as string } });
    expect({ userId: row.userId, name: row.name, enabled: row.enabled }).toEqual({ userId: user_id, name: 'Pixel 8', enabled: true });
  });

  it('exits 1 when --name is missing, registering nothing', async () => {
    const { user_id } = await cliUser();
    const result = await smsgw('device', 'create', '--user', user_id);
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: '--name is required' });
    expect(await db.device.count({ where: { userId: user_id } })).toBe(0);
  });

  it('exits 1 for an unknown user', async () => {
    const user = randomUUID();
    const result = await smsgw('device', 'create', '--user', user, '--name', 'Pixel 8');
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: `no user with id ${user}` });
  });
});

describe.concurrent('smsgw quota set', () => {
  it("changes the user's monthly limit and prints {user_id, limit}", async () => {
    const { user_id } = await cliUser(50);
    const result = await smsgw('quota', 'set', '--user', user_id, '--limit', '75');

    expect(result.code).toBe(0);
    expect(json(result.stdout)).toEqual({ user_id, limit: 75 });
    expect((await db.user.findUniqueOrThrow({ where: { id: user_id } })).monthlyQuota).toBe(75);
  });

  it('accepts a limit of 0', async () => {
    const { user_id } = await cliUser(50);
    expect((await smsgw('quota', 'set', '--user', user_id, '--limit', '0')).code).toBe(0);
    expect((await db.user.findUniqueOrThrow({ where: { id: user_id } })).monthlyQuota).toBe(0);
  });

  it.each([[[] as string[]], [['--limit', '-1']], [['--limit', 'lots']]])('exits 1 with %j, leaving the limit as it was', async (args) => {
    const { user_id } = await cliUser(50);
    const result = await smsgw('quota', 'set', '--user', user_id, ...args);
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: expect.stringContaining('--limit') });
    expect((await db.user.findUniqueOrThrow({ where: { id: user_id } })).monthlyQuota).toBe(50);
  });

  it('exits 1 for an unknown user', async () => {
    const user = randomUUID();
    const result = await smsgw('quota', 'set', '--user', user, '--limit', '10');
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: `no user with id ${user}` });
  });
});

describe.concurrent('smsgw usage', () => {
  it('exits 2 with the usage on stderr for an unknown command', async () => {
    const result = await smsgw('user', 'destroy');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('usage: pnpm smsgw <command>');
  });

  it('prints the usage and exits 0 with --help', async () => {
    const result = await smsgw('user', 'create', '--help');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('user create --name NAME');
  });
});
