import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, send, uniquePhone, type TestUser } from '@smsgw/api/testing';
import { createTestDelivery, createWebhook } from '@smsgw/db';
import { COMMANDS } from './commands/index.ts';
import { EXIT_CODES } from './errors.ts';
import { cliOnApi, failure, runProcess, uniqueName, type CliResult } from './testing/run-cli.ts';

// What every command shares: one JSON document on stdout, a JSON error line and an exit code per kind.
const cli = cliOnApi();
const { smsgw, smsgwWith } = cli;

/** The output of a command: exactly one JSON document, on one line. */
function oneDocument(result: CliResult): unknown {
  expect(result, result.stderr).toMatchObject({ code: 0 });
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}

describe('every command', () => {
  let user: TestUser;
  let ids: Record<string, string>;
  beforeAll(async () => {
    user = await createTestUser(cli.api.db);
    const { webhook } = await createWebhook(cli.api.db, { userId: user.userId, url: 'https://hooks.example/cli', events: ['message.sent'], limit: 20 });
    const sent = (await send(cli.api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' })).json() as { message_ids: string[] };
    const key = await cli.api.db.apiKey.findFirstOrThrow({ where: { userId: user.userId } });
    ids = { webhook: webhook.id, message: sent.message_ids[0]!, key: key.id };
    await createTestDelivery(cli.api.db, { userId: user.userId, webhookId: webhook.id });
  });

  // The arguments of one successful run of each command, in an order where each finds what it needs.
  const runs: Record<string, () => string[]> = {
    'user create': () => ['--name', uniqueName('every')],
    'user list': () => [],
    'user show': () => ['--user', user.user.name],
    'user disable': () => ['--user', user.userId],
    'user enable': () => ['--user', user.userId],
    'key create': () => ['--user', user.userId],
    'key list': () => ['--user', user.userId],
    'device create': () => ['--user', user.userId, '--name', 'modem'],
    'device pair': () => ['--user', user.userId],
    'pairing create': () => ['--user', user.userId],
    'device list': () => ['--user', user.userId],
    'device show': () => ['--user', user.userId, '--device', user.deviceId!],
    'device disable': () => ['--user', user.userId, '--device', user.deviceId!],
    'device enable': () => ['--user', user.userId, '--device', user.deviceId!],
    'quota show': () => ['--user', user.userId],
    'quota set': () => ['--user', user.userId, '--limit', '1000'],
    'twilio show': () => ['--user', user.userId],
    'twilio rotate': () => ['--user', user.userId],
    'message send': () => ['--user', user.userId, '--to', uniquePhone(), '--text', 'hello'],
    'message list': () => ['--user', user.userId],
    'message show': () => ['--user', user.userId, '--message', ids.message!],
    'webhook list': () => ['--user', user.userId],
    'webhook test': () => ['--user', user.userId, '--webhook', ids.webhook!],
    'key revoke': () => ['--user', user.userId, '--key', ids.key!],
    'device limit': () => ['--user', user.userId, '--device', user.deviceId!, '--per-hour', '100'],
    'device delete': () => ['--user', user.userId, '--device', user.deviceId!],
  };

  it('has a run for every command of the CLI', () => {
    expect(Object.keys(runs).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it('prints exactly one JSON document on stdout, and nothing on stderr', async () => {
    for (const [command, args] of Object.entries(runs)) {
      const result = await smsgw(...command.split(' '), ...args());
      expect(oneDocument(result), command).toBeTypeOf('object');
      expect(result.stderr, command).toBe('');
    }
  }, 180_000);
});

describe('usage', () => {
  it('--help lists every command and every exit code on stderr, exits 0, and prints nothing on stdout', async () => {
    const result = await smsgw('--help');
    expect(result).toMatchObject({ code: 0, stdout: '' });
    for (const command of Object.values(COMMANDS)) expect(result.stderr).toContain(command.usage);
    for (const { exit, meaning } of Object.values(EXIT_CODES)) expect(result.stderr).toContain(`${exit}  ${meaning}`);
    expect((await smsgw('user', 'create', '-h')).stderr).toBe(result.stderr);
  });

  it.each([
    [['user', 'destroy'], "unknown command 'user destroy'"],
    [[], 'no command given'],
    [['user', 'list', '--bogus', 'x'], "'--bogus'"],
    [['user', 'list', '--text', 'x'], 'user list takes no --text'],
    [['user', 'show', '--user'], "'--user"],
  ])('exits 2 with one JSON error line for %j', async (args, says) => {
    const result = await smsgw(...args);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(failure(result)).toMatchObject({ code: 2, error: 'usage', message: expect.stringContaining(says) });
  });
});

describe('environment', () => {
  it('exits 5 (configuration) naming the variable that is wrong', async () => {
    const result = failure(await smsgwWith({ DATABASE_URL: 'mysql://localhost/smsgw' }, 'user', 'list'));
    expect(result).toMatchObject({ code: 5, error: 'configuration', message: expect.stringContaining('DATABASE_URL') });
    expect(result.message).not.toContain('\n');
  });

  it('exits 5 when Postgres cannot be reached, in one line that says which variable', async () => {
    const result = failure(await smsgwWith({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/smsgw' }, 'user', 'list'));
    expect(result).toMatchObject({
      code: 5,
      error: 'database_unavailable',
      message: expect.stringMatching(/^Cannot reach Postgres \(DATABASE_URL\): .*127\.0\.0\.1:1/),
    });
    expect(result.message).not.toContain('\n');
  });

  it('exits 1 (unexpected) with the reason in one line for a failure of no other kind: a role without access', async () => {
    const role = `smsgw_cli_${randomBytes(4).toString('hex')}`;
    await cli.api.db.$executeRawUnsafe(`CREATE ROLE ${role} LOGIN`);
    try {
      const url = new URL(cli.api.databaseUrl);
      url.username = role;
      const result = failure(await smsgwWith({ DATABASE_URL: url.toString() }, 'user', 'list'));
      expect(result).toMatchObject({ code: 1, error: 'unexpected', message: expect.stringContaining('permission denied') });
      expect(result.message).not.toContain('\n');
    } finally {
      await cli.api.db.$executeRawUnsafe(`DROP ROLE ${role}`);
    }
  });

  it('exits 5 with the fix when the database does not exist or is not migrated', async () => {
    const url = new URL(cli.api.databaseUrl);
    url.pathname = `/smsgw_missing_${randomUUID().slice(0, 8)}`;
    expect(failure(await smsgwWith({ DATABASE_URL: url.toString() }, 'user', 'list'))).toEqual({
      code: 5,
      error: 'database_not_migrated',
      message: 'The database of DATABASE_URL does not exist or is not migrated: run ./pnpmw db:migrate.',
    });
  });
});

describe('./pnpmw smsgw, and the smsgw bin', () => {
  it("prints only the JSON document on stdout: pnpm runs the bin of the root's @smsgw/cli, without the banner of a script", async () => {
    const result = await runProcess('./pnpmw', ['smsgw', 'user', 'list', '--limit', '1'], { DATABASE_URL: cli.api.databaseUrl });
    expect(oneDocument(result)).toMatchObject({ limit: 1, offset: 0 });
  });

  it('the package bin (what pnpm runs without a banner) builds, runs and passes on stdout, stderr and the exit code', async () => {
    const bin = (...args: string[]) => runProcess(process.execPath, ['apps/cli/bin/smsgw.mjs', ...args], { DATABASE_URL: cli.api.databaseUrl });
    expect(oneDocument(await bin('user', 'list', '--limit', '2'))).toMatchObject({ limit: 2 });
    expect(failure(await bin('user', 'show', '--user', 'nobody-by-bin'))).toEqual({
      code: 3,
      error: 'not_found',
      message: 'no user with id or name nobody-by-bin',
    });
  });
});
