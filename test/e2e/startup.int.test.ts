import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import pg from 'pg';
import { createTestDatabase } from '@smsgw/db/testing';
import { freePort } from '../support/cluster.ts';

/**
 * Start-up on a database or a Redis that cannot serve (issue 13, item 5): the API and the dispatcher
 * say so in one line that names the variable and the fix, and exit 1 within seconds, before listening.
 * The tests of a block run side by side: each starts processes of its own (on ports and databases of
 * their own) and waits for them to exit, which leaves a core idle when they run one at a time.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const server = new URL(inject('databaseUrl'));
const empty = `smsgw_empty_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${empty}`);
  await client.end();
});
afterAll(async () => {
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${empty} WITH (FORCE)`);
  await client.end();
});

function databaseUrl(name: string, port = server.port): string {
  return Object.assign(new URL(server), { pathname: `/${name}`, port }).toString();
}

function spawnProcess(kind: 'api' | 'dispatcher', url: string, env: Record<string, string>, port: number) {
  const child = spawn(process.execPath, [`dist/${kind}.mjs`], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, JWT_SECRET: 'startup-test-secret-of-at-least-32-chars', PORT: String(port), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  return { child, lines: () => output.split('\n').filter(Boolean) };
}

/**
 * Starts the process and waits for it to end. One that has not ended by itself within 15 s is
 * killed (code null), so `code` 1 says it gave up by itself, and soon: no wall-clock bound beyond
 * that, which the suite's load (many starts at once beside other suites) would make flaky.
 */
async function run(kind: 'api' | 'dispatcher', url: string, env: Record<string, string> = {}): Promise<{ code: number | null; lines: string[] }> {
  const { child, lines } = spawnProcess(kind, url, env, await freePort());
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, lines: lines() };
}

describe.concurrent.each(['api', 'dispatcher'] as const)('%s start-up', (kind) => {
  it('names a database that does not exist and the fix', async () => {
    const result = await run(kind, databaseUrl(`smsgw_missing_${randomBytes(4).toString('hex')}`));
    expect(result.code).toBe(1);
    expect(result.lines).toEqual([expect.stringMatching(/does not exist \(DATABASE_URL\): create and migrate it with \.\/pnpmw db:migrate/)]);
  });

  it('names a database without its migrations and the fix', async () => {
    const result = await run(kind, databaseUrl(empty));
    expect(result.code).toBe(1);
    expect(result.lines).toEqual([expect.stringMatching(/lacks \d+ migration\(s\), the newest \d+_\w+: run \.\/pnpmw db:migrate/)]);
  });

  it('names a Redis that does not answer', async () => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    try {
      const result = await run(kind, database.url, { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
      expect(result.code).toBe(1);
      expect(result.lines).toEqual([expect.stringMatching(/^Cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): .*Is it running\?$/)]);
    } finally {
      await database.drop();
    }
  });

  it.each([
    ['REDIS_CLUSTER_NODES', /^Cannot reach the Redis Cluster at 127\.0\.0\.1:\d+ \(REDIS_CLUSTER_NODES\): .*Is it running\?$/],
    [
      'REDIS_SENTINELS',
      /^Cannot reach the Redis primary "mymaster" \(REDIS_SENTINEL_NAME\) through the Sentinels at 127\.0\.0\.1:\d+ \(REDIS_SENTINELS\): .*Is it running\?$/,
    ],
  ])('names %s when nothing answers there', async (variable, line) => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    try {
      const result = await run(kind, database.url, { [variable]: `127.0.0.1:${await freePort()}` });
      expect(result.code).toBe(1);
      expect(result.lines).toEqual([expect.stringMatching(line)]);
    } finally {
      await database.drop();
    }
  });

  it('names a Postgres that does not answer', async () => {
    const result = await run(kind, databaseUrl('smsgw', String(await freePort())));
    expect(result.code).toBe(1);
    expect(result.lines).toEqual([expect.stringMatching(/^Cannot reach Postgres at 127\.0\.0\.1:\d+\/smsgw \(DATABASE_URL\)/)]);
  });
});

/**
 * A wrong environment or an address the process cannot listen on (issue 24, item 7): one line that
 * names the variable and the fix, exit 1, never a stack.
 */
describe.concurrent('start-up errors of the environment and the listen address', () => {
  const oneLine = async (kind: 'api' | 'dispatcher', env: Record<string, string>, url = databaseUrl('smsgw')) => {
    const result = await run(kind, url, env);
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    return result.lines[0]!;
  };

  it.each([
    ['api', { PORT: 'abc' }, /^Invalid PORT: set it to a whole number from 0 to 65535, or unset it for the default \(3000\)\. /],
    ['api', { PORT: '70000' }, /^Invalid PORT: set it to a whole number from 0 to 65535/],
    ['api', { JWT_TTL_SECONDS: '1.5' }, /^Invalid JWT_TTL_SECONDS: set it to a whole number from 1 to 86400, or unset it for the default \(900\)\. /],
    ['api', { JWT_SECRET: '' }, /^JWT_SECRET is not set: set it to text of at least 32 characters\. /],
    ['dispatcher', { METRICS_PORT: 'abc' }, /^Invalid METRICS_PORT: set it to a whole number from 0 to 65535, or unset it for the default \(0\)\. /],
    ['dispatcher', { HEAP_GROWTH_PERCENT: 'lots' }, /^Invalid HEAP_GROWTH_PERCENT: set it to a whole number from 0 to 300/],
    ['dispatcher', { REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' }, /^Invalid REDIS_CLUSTER_NODES: set it to text matching .* A Redis Cluster instead/],
  ] as const)('%s with %j says so in one line', async (kind, env, line) => {
    expect(await oneLine(kind, env)).toMatch(line);
  });

  it('a Redis Cluster and Sentinels at once are refused in one line that names both', async () => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    try {
      expect(await oneLine('api', { REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_SENTINELS: '127.0.0.1:26379' }, database.url)).toBe(
        'REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: set the one that describes your Redis, and unset the other.',
      );
    } finally {
      await database.drop();
    }
  });

  it('an API whose HOST does not resolve, or is not an address of this machine, names HOST and the fix', async () => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    try {
      const [unresolved, foreign] = await Promise.all([
        oneLine('api', { HOST: 'no-such-host.invalid' }, database.url),
        oneLine('api', { HOST: '192.0.2.1' }, database.url),
      ]);
      expect(unresolved).toMatch(/^HOST no-such-host\.invalid does not resolve to an address: set HOST to an address of this machine, e\.g\. 127\.0\.0\.1/);
      expect(foreign).toMatch(/^HOST 192\.0\.2\.1 is not an address of this machine: set HOST to one/);
    } finally {
      await database.drop();
    }
  });

  it('an API or a dispatcher whose port is taken names the variable and the fix', async () => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const api = spawnProcess('api', database.url, {}, port);
      const [code, dispatcherLine] = await Promise.all([
        new Promise<number | null>((resolve) => api.child.once('close', resolve)),
        oneLine('dispatcher', { METRICS_PORT: String(port) }, database.url),
      ]);
      expect({ code, lines: api.lines() }).toEqual({
        code: 1,
        lines: [`Port ${port} on 127.0.0.1 is in use (PORT): stop what holds it, or set PORT to a free port.`],
      });
      expect(dispatcherLine).toBe(`Port ${port} on 127.0.0.1 is in use (METRICS_PORT): stop what holds it, or set METRICS_PORT to a free port.`);
    } finally {
      taken.close();
      await database.drop();
    }
  });
});

describe('settings that every API and dispatcher must share', () => {
  it('an API started next to a dispatcher that differs names the variable in one error line', async () => {
    const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    const env = { QUEUE_PREFIX: `agree-${randomBytes(4).toString('hex')}` };
    const dispatcher = spawnProcess('dispatcher', database.url, { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' }, await freePort());
    try {
      await vi.waitFor(() => expect(dispatcher.lines().join('\n')).toContain('dispatcher started'), { timeout: 15_000 });
      const api = spawnProcess('api', database.url, env, await freePort());
      try {
        await vi.waitFor(() => expect(api.lines().join('\n')).toContain('Server listening'), { timeout: 15_000 });
        const errors = api.lines().filter((line) => line.includes('"level":50'));
        expect(errors).toEqual([
          expect.stringMatching(/WEBHOOK_ALLOW_PRIVATE is false here but true in dispatcher@[^:]+:\d+: set it the same for every API and dispatcher/),
        ]);
      } finally {
        api.child.kill('SIGKILL');
      }
    } finally {
      dispatcher.child.kill('SIGKILL');
      await database.drop();
    }
  });
});
