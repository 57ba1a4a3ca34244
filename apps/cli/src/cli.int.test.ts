import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { authenticateApiKey, createDb, createDevice, createPairing, createUser, listDevices, registerPairedPhone, type Db } from '@smsgw/db';
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
function smsgw(...args: string[]): Promise<CliResult> {
  return smsgwWith({}, ...args);
}

/** `smsgw <args>` with more environment variables. */
async function smsgwWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  try {
    // The bundle that `pnpm smsgw` runs (built by the global setup).
    const { stdout, stderr } = await run(process.execPath, ['dist/cli.mjs', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: database.url, ...env },
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

/** A user made directly in the database, for tests of other commands (each CLI run costs a process start). */
async function dbUser(): Promise<string> {
  return (await createUser(db, { name: uniqueName('user'), monthlyQuota: null })).id;
}

describe.concurrent('smsgw pairing create', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest();

  it('prints the code, the token, the expiry, the mobile URL of PUBLIC_URL and the steps; the pairing is stored hashed', async () => {
    const user_id = await dbUser();
    const before = Date.now();
    const result = await smsgwWith({ PUBLIC_URL: 'https://sms.example.org', PAIRING_TTL_SECONDS: '300' }, 'pairing', 'create', '--user', user_id, '--name', 'Shop phone');

    expect(result.code).toBe(0);
    const out = json(result.stdout) as { code: string; token: string; expires_at: string; mobile_url: string; steps: string[] };
    expect(out).toEqual({
      code: expect.stringMatching(/^\d{8}$/),
      token: expect.stringMatching(/^smsgw_pt_/),
      expires_at: expect.stringMatching(/Z$/),
      mobile_url: 'https://sms.example.org/mobile/v1',
      steps: expect.any(Array),
    });
    const expires = Date.parse(out.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 300_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 300_000);
    const steps = out.steps.join('\n');
    for (const part of ['SSE Only', 'Settings → Cloud server… → API URL: https://sms.example.org/mobile/v1', 'By Code', out.code, 'Private Token', out.token, 'restart the app', 'app-release.apk', 'docs/devices.md']) {
      expect(steps).toContain(part);
    }
    expect(steps.indexOf('SSE Only')).toBeLessThan(steps.indexOf('By Code'));

    const row = await db.devicePairing.findFirstOrThrow({ where: { userId: user_id } });
    expect({ name: row.name, expiresAt: row.expiresAt.toISOString(), usedAt: row.usedAt }).toEqual({ name: 'Shop phone', expiresAt: out.expires_at, usedAt: null });
    expect(Buffer.from(row.codeHash).equals(sha256(out.code))).toBe(true);
    expect(Buffer.from(row.tokenHash).equals(sha256(out.token))).toBe(true);
  });

  it('shows http://HOST:PORT/mobile/v1 without PUBLIC_URL, and says that plain HTTP needs the insecure APK', async () => {
    const user_id = await dbUser();
    const result = await smsgwWith({ HOST: '0.0.0.0', PORT: '8080', PUBLIC_URL: '' }, 'pairing', 'create', '--user', user_id);
    expect(result.code).toBe(0);
    const out = json(result.stdout) as { mobile_url: string; steps: string[] };
    expect(out.mobile_url).toBe('http://127.0.0.1:8080/mobile/v1');
    expect(out.steps.join('\n')).toContain('app-insecure.apk');
  });

  it('exits 1 for an unknown user, creating nothing', async () => {
    const user = randomUUID();
    const result = await smsgw('pairing', 'create', '--user', user);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(json(result.stderr)).toEqual({ error: `no user with id ${user}` });
    expect(await db.devicePairing.count({ where: { userId: user } })).toBe(0);
  });

  it('exits 1 with a JSON error naming the variable when PUBLIC_URL is not a URL', async () => {
    const user_id = await dbUser();
    const result = await smsgwWith({ PUBLIC_URL: 'sms.example.org' }, 'pairing', 'create', '--user', user_id);
    expect(result.code).toBe(1);
    expect(json(result.stderr)).toEqual({ error: expect.stringContaining('PUBLIC_URL') });
    expect(await db.devicePairing.count({ where: { userId: user_id } })).toBe(0);
  });
});

describe.concurrent('smsgw device list, disable, enable, delete', () => {
  interface ListedDevice {
    id: string;
    name: string;
    protocol: string;
    enabled: boolean;
    available: boolean;
    connection: string | null;
    last_seen_at: string | null;
    app_version: string | null;
    warnings: string[];
    created_at: string;
  }

  async function dbDevice(userId: string, name: string): Promise<string> {
    return (await createDevice(db, { userId, name })).device.id;
  }

  async function listed(userId: string): Promise<ListedDevice[]> {
    const result = await smsgw('device', 'list', '--user', userId);
    expect(result.code).toBe(0);
    return (json(result.stdout) as { data: ListedDevice[] }).data;
  }

  it('lists the user’s devices with protocol, availability, last seen, app version and warnings', async () => {
    const user_id = await dbUser();
    const modem = await dbDevice(user_id, 'modem');
    const seenAt = new Date();
    await db.device.update({ where: { id: modem }, data: { lastSeenAt: seenAt } });
    const { code } = await createPairing(db, { userId: user_id, ttlSeconds: 60 });
    const phone = await registerPairedPhone(db, code, { name: 'Pixel 8', appVersion: '1.68.0', pushToken: true, simCards: null });

    const devices = await listed(user_id);
    expect(devices).toEqual([
      {
        id: modem, name: 'modem', protocol: 'native', enabled: true, available: true, connection: 'requests',
        last_seen_at: seenAt.toISOString(), app_version: null, warnings: [], created_at: expect.any(String),
      },
      {
        id: phone!.id, name: 'Pixel 8', protocol: 'sms_gate', enabled: true, available: false, connection: null,
        last_seen_at: null, app_version: '1.68.0', warnings: [expect.stringContaining('SSE only')], created_at: expect.any(String),
      },
    ]);
  });

  it('prints an empty list for a user without devices', async () => {
    const user_id = await dbUser();
    expect(await listed(user_id)).toEqual([]);
  });

  it('disables and enables a device', async () => {
    const user_id = await dbUser();
    const id = await dbDevice(user_id, 'phone');

    const disabled = await smsgw('device', 'disable', '--user', user_id, '--device', id);
    expect(disabled.code).toBe(0);
    expect(json(disabled.stdout)).toEqual({ device_id: id, enabled: false });
    expect((await db.device.findUniqueOrThrow({ where: { id } })).enabled).toBe(false);

    const enabled = await smsgw('device', 'enable', '--user', user_id, '--device', id);
    expect(json(enabled.stdout)).toEqual({ device_id: id, enabled: true });
    expect((await db.device.findUniqueOrThrow({ where: { id } })).enabled).toBe(true);
  });

  it('deletes a device: it is gone from the user’s devices, and a second delete is an error', async () => {
    const user_id = await dbUser();
    const id = await dbDevice(user_id, 'phone');

    const deleted = await smsgw('device', 'delete', '--user', user_id, '--device', id);
    expect(deleted.code).toBe(0);
    expect(json(deleted.stdout)).toEqual({ device_id: id, deleted: true });
    expect((await db.device.findUniqueOrThrow({ where: { id } })).deletedAt).not.toBeNull();
    expect(await listDevices(db, user_id)).toEqual([]);

    const again = await smsgw('device', 'delete', '--user', user_id, '--device', id);
    expect(again.code).toBe(1);
    expect(json(again.stderr)).toEqual({ error: `no device with id ${id} for user ${user_id}` });
  });

  it.each(['disable', 'enable', 'delete'])('device %s exits 1 for another user’s device, a malformed id or no --device, changing nothing', async (verb) => {
    const owner = await dbUser();
    const theirs = await dbDevice(owner, 'theirs');
    const user_id = await dbUser();

    const ids = [theirs, 'not-a-uuid'];
    const [missing, ...results] = await Promise.all([
      smsgw('device', verb, '--user', user_id),
      ...ids.map((id) => smsgw('device', verb, '--user', user_id, '--device', id)),
    ]);
    results.forEach((result, i) => {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(json(result.stderr)).toEqual({ error: `no device with id ${ids[i]} for user ${user_id}` });
    });
    expect(json(missing.stderr)).toEqual({ error: '--device is required' });
    const row = await db.device.findUniqueOrThrow({ where: { id: theirs } });
    expect({ enabled: row.enabled, deletedAt: row.deletedAt }).toEqual({ enabled: true, deletedAt: null });
  });

  it('device list exits 1 for an unknown user', async () => {
    const user = randomUUID();
    const result = await smsgw('device', 'list', '--user', user);
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
