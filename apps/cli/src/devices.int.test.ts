import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice, createPairing, createUser, listDevices, registerPairedPhone } from '@smsgw/db';
import { cliDatabase, failure, ok, uniqueName, type CliDatabase } from './testing/run-cli.ts';

let cli: CliDatabase;
beforeAll(async () => {
  cli = await cliDatabase();
});
afterAll(async () => {
  await cli?.close();
});

const smsgw = (...args: string[]) => cli.smsgw(...args);
const smsgwWith = (env: Record<string, string>, ...args: string[]) => cli.smsgwWith(env, ...args);

/** A user made directly in the database. */
async function dbUser(): Promise<string> {
  return (await createUser(cli.db, { name: uniqueName('user'), monthlyQuota: null })).id;
}

const UNUSED = (resets: unknown) => ({ limit: null, used: 0, resets_at: resets });
const NO_LIMITS = {
  rate_limit_per_minute: null,
  rate_limit_per_hour: null,
  rate_limit_per_day: null,
  segments_per_hour: null,
  segments_per_day: null,
  segments_per_month: null,
  unique_recipients_per_month: null,
  twilio_sms_url: null,
  sims: [],
  usage: {
    segments_per_hour: UNUSED(null),
    segments_per_day: UNUSED(expect.any(String)),
    segments_per_month: UNUSED(expect.any(String)),
    unique_recipients_per_month: UNUSED(expect.any(String)),
    sims: [],
  },
};

describe('smsgw device create', () => {
  it('registers a device of the user and prints {device_id, device_token}', async () => {
    const user_id = await dbUser();
    const out = ok(await smsgw('device', 'create', '--user', user_id, '--name', 'Pixel 8'));

    expect(out).toEqual({ device_id: expect.any(String), device_token: expect.stringMatching(/^smsgw_dt_/) });
    const row = await cli.db.device.findUniqueOrThrow({ where: { id: out.device_id as string } });
    expect({ userId: row.userId, name: row.name, enabled: row.enabled }).toEqual({ userId: user_id, name: 'Pixel 8', enabled: true });
  });

  it('exits 2 when --name is missing, registering nothing', async () => {
    const user_id = await dbUser();
    expect(failure(await smsgw('device', 'create', '--user', user_id))).toEqual({ code: 2, error: 'usage', message: '--name is required' });
    expect(await cli.db.device.count({ where: { userId: user_id } })).toBe(0);
  });

  it('exits 3 for an unknown user', async () => {
    const user = randomUUID();
    expect(failure(await smsgw('device', 'create', '--user', user, '--name', 'Pixel 8'))).toEqual({
      code: 3,
      error: 'not_found',
      message: `no user with id or name ${user}`,
    });
  });
});

describe('smsgw device pair (alias pairing create)', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest();

  it('prints the code, the token, the expiry, the mobile URL of PUBLIC_URL and the steps; the pairing is stored hashed', async () => {
    const user_id = await dbUser();
    const before = Date.now();
    const result = await smsgwWith(
      { PUBLIC_URL: 'https://sms.example.org', PAIRING_TTL_SECONDS: '300' },
      'device',
      'pair',
      '--user',
      user_id,
      '--name',
      'Shop phone',
    );
    const out = ok(result) as unknown as { code: string; token: string; expires_at: string; mobile_url: string; steps: string[] };
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
    for (const part of [
      'SSE Only',
      'Settings → Cloud server… → API URL: https://sms.example.org/mobile/v1',
      'By Code',
      out.code,
      'Private Token',
      out.token,
      'restart the app',
      'app-release.apk',
      'docs/devices.md',
    ]) {
      expect(steps).toContain(part);
    }
    expect(steps.indexOf('SSE Only')).toBeLessThan(steps.indexOf('By Code'));

    const row = await cli.db.devicePairing.findFirstOrThrow({ where: { userId: user_id } });
    expect({ name: row.name, expiresAt: row.expiresAt.toISOString(), usedAt: row.usedAt }).toEqual({
      name: 'Shop phone',
      expiresAt: out.expires_at,
      usedAt: null,
    });
    expect(Buffer.from(row.codeHash).equals(sha256(out.code))).toBe(true);
    expect(Buffer.from(row.tokenHash).equals(sha256(out.token))).toBe(true);
  });

  it('shows http://HOST:PORT/mobile/v1 without PUBLIC_URL, and says that plain HTTP needs the insecure APK', async () => {
    const user_id = await dbUser();
    // `pairing create`, the command's name before `device pair`, does the same.
    const result = await smsgwWith({ HOST: '0.0.0.0', PORT: '8080', PUBLIC_URL: '' }, 'pairing', 'create', '--user', user_id);
    const out = ok(result) as unknown as { mobile_url: string; steps: string[] };
    expect(out.mobile_url).toBe('http://127.0.0.1:8080/mobile/v1');
    expect(out.steps.join('\n')).toContain('app-insecure.apk');
  });

  it('exits 3 for an unknown user, creating nothing', async () => {
    const user = randomUUID();
    expect(failure(await smsgw('device', 'pair', '--user', user))).toEqual({ code: 3, error: 'not_found', message: `no user with id or name ${user}` });
    expect(await cli.db.devicePairing.count({ where: { userId: user } })).toBe(0);
  });

  it('exits 5 (configuration) with a JSON error naming the variable when PUBLIC_URL is not a URL', async () => {
    const user_id = await dbUser();
    expect(failure(await smsgwWith({ PUBLIC_URL: 'sms.example.org' }, 'device', 'pair', '--user', user_id))).toEqual({
      code: 5,
      error: 'configuration',
      message: expect.stringContaining('PUBLIC_URL'),
    });
    expect(await cli.db.devicePairing.count({ where: { userId: user_id } })).toBe(0);
  });
});

describe('smsgw device list, disable, enable, delete', () => {
  interface ListedDevice {
    id: string;
    name: string;
    protocol: string;
    enabled: boolean;
    sim_cards: unknown[] | null;
    available: boolean;
    connection: string | null;
    last_seen_at: string | null;
    app_version: string | null;
    warnings: string[];
    created_at: string;
    updated_at: string;
  }

  async function dbDevice(userId: string, name: string): Promise<string> {
    return (await createDevice(cli.db, { userId, name })).device.id;
  }

  async function listed(userId: string): Promise<ListedDevice[]> {
    return (ok(await smsgw('device', 'list', '--user', userId)) as unknown as { data: ListedDevice[] }).data;
  }

  it("sets, shows and removes a device's rate limits (device limit), refusing what the API refuses", async () => {
    const user_id = ok(await smsgw('user', 'create', '--name', uniqueName('limits'))).user_id as string;
    const device_id = ok(await smsgw('device', 'create', '--user', user_id, '--name', 'SIM 1')).device_id as string;
    const limited = ok(await smsgw('device', 'limit', '--user', user_id, '--device', device_id, '--per-minute', '6', '--per-day', '500'));
    expect(limited).toMatchObject({ id: device_id, rate_limit_per_minute: 6, rate_limit_per_hour: null, rate_limit_per_day: 500 });
    const cleared = ok(await smsgw('device', 'limit', '--user', user_id, '--device', device_id, '--per-minute', 'none'));
    expect(cleared).toMatchObject({ rate_limit_per_minute: null, rate_limit_per_day: 500 });
    const refusals = [...['0', '100001', '-1', 'six'].map((value) => ['--per-hour', value]), []];
    const refused = await Promise.all(refusals.map((args) => smsgw('device', 'limit', '--user', user_id, '--device', device_id, ...args)));
    expect(refused.map((result) => failure(result).code)).toEqual(refusals.map(() => 2));
    expect(ok(await smsgw('device', 'show', '--user', user_id, '--device', device_id))).toMatchObject({ rate_limit_per_hour: null, rate_limit_per_day: 500 });
  }, 60_000); // nine CLI processes

  it('sets carrier budgets of the device and of one SIM (device limit --segments-… --sim), refusing what the API refuses', async () => {
    const user_id = await dbUser();
    const device_id = ok(await smsgw('device', 'create', '--user', user_id, '--name', 'two SIMs')).device_id as string;
    await cli.db.device.update({ where: { id: device_id }, data: { simCards: [{ simNumber: 1 }, { simNumber: 2 }] } });
    const set = ok(
      await smsgw('device', 'limit', '--user', user_id, '--device', device_id, '--segments-per-hour', '100', '--unique-recipients-per-month', '250'),
    );
    expect(set).toMatchObject({ segments_per_hour: 100, segments_per_day: null, unique_recipients_per_month: 250, sims: [] });
    expect(set.usage).toMatchObject({ segments_per_hour: { limit: 100, used: 0 } });
    const sim = ok(await smsgw('device', 'limit', '--user', user_id, '--device', device_id, '--sim', '2', '--segments-per-day', '100'));
    expect(sim).toMatchObject({ segments_per_hour: 100, sims: [{ sim_number: 2, segments_per_day: 100, segments_per_hour: null }] });
    const refusals = [
      ['--segments-per-month', '10000001'],
      ['--sim', '3', '--segments-per-day', '5'],
      ['--sim', '2'],
    ];
    const refused = await Promise.all(refusals.map((args) => smsgw('device', 'limit', '--user', user_id, '--device', device_id, ...args)));
    expect(refused.map((result) => failure(result).code)).toEqual(refusals.map(() => 2));
    const row = await cli.db.device.findUniqueOrThrow({ where: { id: device_id } });
    expect([row.segmentsPerHour, row.segmentsPerDay, row.segmentsPerMonth, row.simBudgets]).toEqual([
      100,
      null,
      null,
      [{ sim_number: 2, segments_per_day: 100 }],
    ]);
  }, 60_000); // six CLI processes

  it('lists the user’s devices with protocol, availability, last seen, app version and warnings', async () => {
    const user_id = await dbUser();
    const modem = await dbDevice(user_id, 'modem');
    const seenAt = new Date();
    await cli.db.device.update({ where: { id: modem }, data: { lastSeenAt: seenAt } });
    const { code } = await createPairing(cli.db, { userId: user_id, ttlSeconds: 60 });
    const phone = await registerPairedPhone(cli.db, code, { name: 'Pixel 8', appVersion: '1.68.0', pushToken: true, simCards: null });

    const devices = await listed(user_id);
    expect(devices).toEqual([
      {
        id: modem,
        name: 'modem',
        protocol: 'native',
        enabled: true,
        available: true,
        connection: 'requests',
        last_seen_at: seenAt.toISOString(),
        app_version: null,
        sim_cards: null,
        warnings: [],
        ...NO_LIMITS,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        health: { status: 'online', reasons: [], last_seen_at: seenAt.toISOString(), connection: 'poll', app_version: null, battery: null, signal: null },
      },
      {
        id: phone!.id,
        name: 'Pixel 8',
        protocol: 'sms_gate',
        enabled: true,
        available: false,
        connection: null,
        last_seen_at: null,
        app_version: '1.68.0',
        sim_cards: null,
        warnings: [expect.stringContaining('SSE only')],
        ...NO_LIMITS,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        health: { status: 'offline', reasons: ['not_connected'], last_seen_at: null, connection: null, app_version: '1.68.0', battery: null, signal: null },
      },
    ]);
    // `device show` prints the same record of one device.
    expect(ok(await smsgw('device', 'show', '--user', user_id, '--device', modem))).toEqual(devices[0]);
  });

  it('prints an empty list for a user without devices', async () => {
    const user_id = await dbUser();
    expect(await listed(user_id)).toEqual([]);
  });

  it('disables and enables a device', async () => {
    const user_id = await dbUser();
    const id = await dbDevice(user_id, 'phone');

    expect(ok(await smsgw('device', 'disable', '--user', user_id, '--device', id))).toMatchObject({ id, enabled: false, available: false });
    expect((await cli.db.device.findUniqueOrThrow({ where: { id } })).enabled).toBe(false);

    expect(ok(await smsgw('device', 'enable', '--user', user_id, '--device', id))).toMatchObject({ id, enabled: true });
    expect((await cli.db.device.findUniqueOrThrow({ where: { id } })).enabled).toBe(true);
  });

  it('deletes a device: it is gone from the user’s devices, and a second delete is an error', async () => {
    const user_id = await dbUser();
    const id = await dbDevice(user_id, 'phone');

    expect(ok(await smsgw('device', 'delete', '--user', user_id, '--device', id))).toEqual({ device_id: id, deleted: true });
    expect((await cli.db.device.findUniqueOrThrow({ where: { id } })).deletedAt).not.toBeNull();
    expect(await listDevices(cli.db, user_id)).toEqual([]);

    expect(failure(await smsgw('device', 'delete', '--user', user_id, '--device', id))).toEqual({
      code: 3,
      error: 'not_found',
      message: `no device with id ${id} for user ${user_id}`,
    });
  });

  it.each(['show', 'disable', 'enable', 'delete'])(
    'device %s exits 3 for another user’s device, a malformed id or no --device, changing nothing',
    async (verb) => {
      const owner = await dbUser();
      const theirs = await dbDevice(owner, 'theirs');
      const user_id = await dbUser();

      const ids = [theirs, 'not-a-uuid'];
      const [missing, ...results] = await Promise.all([
        smsgw('device', verb, '--user', user_id),
        ...ids.map((id) => smsgw('device', verb, '--user', user_id, '--device', id)),
      ]);
      results.forEach((result, i) => {
        expect(failure(result)).toEqual({ code: 3, error: 'not_found', message: `no device with id ${ids[i]} for user ${user_id}` });
      });
      expect(failure(missing)).toEqual({ code: 2, error: 'usage', message: '--device is required' });
      const row = await cli.db.device.findUniqueOrThrow({ where: { id: theirs } });
      expect({ enabled: row.enabled, deletedAt: row.deletedAt }).toEqual({ enabled: true, deletedAt: null });
    },
  );

  it('device list gives every device, however many pages of the API they fill (1,100: three pages of 500)', async () => {
    const user_id = ok(await smsgw('user', 'create', '--name', uniqueName('fleet'))).user_id as string;
    await cli.db.$executeRaw`
      INSERT INTO devices (id, user_id, name, token_hash, created_at, updated_at)
      SELECT gen_random_uuid(), ${user_id}::uuid, 'phone-' || n, decode(md5(${user_id} || ':' || n), 'hex'), now(), now() FROM generate_series(1, 1100) n`;
    const devices = await listed(user_id);
    expect(new Set(devices.map((d) => d.id)).size).toBe(1100);
  });

  it('device list exits 3 for an unknown user', async () => {
    const user = randomUUID();
    expect(failure(await smsgw('device', 'list', '--user', user))).toEqual({ code: 3, error: 'not_found', message: `no user with id or name ${user}` });
  });
});
