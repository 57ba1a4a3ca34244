import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describe, expect, inject, it, type TestContext } from 'vitest';
import pg from 'pg';
import { freePort } from '../support/cluster.ts';
import { startPrivateRedis, type PrivateRedis } from './support/services.ts';
import { exitOf, summarizeLog } from './support/fixture.ts';

/**
 * `./pnpmw start` (scripts/start.ts) as a user runs it: Ctrl-C stops everything once and exits 0
 * (issue 11, item 4); a second start on a busy port says so and leaves the first one working. The
 * tests run side by side, each with a Redis, a database and a port of its own: the idle minute of
 * one need not wait for the others.
 */
interface Start {
  child: ChildProcess;
  output: string[];
  /** Resolves when the banner is out (the demo phone is up), or rejects with the output after `ms`. */
  up(ms?: number): Promise<void>;
}

/** What a test started, stopped when it finishes (last started, first stopped). */
function cleanupsOf({ onTestFinished }: TestContext): (cleanup: () => Promise<void>) => void {
  const cleanups: (() => Promise<void>)[] = [];
  onTestFinished(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => void cleanups.push(cleanup);
}

async function environment(cleanup: (fn: () => Promise<void>) => void): Promise<{ redis: PrivateRedis; env: Record<string, string> }> {
  const redis = await startPrivateRedis();
  const database = `smsgw_start_${randomBytes(4).toString('hex')}`;
  const server = new URL(inject('databaseUrl'));
  const databaseUrl = Object.assign(new URL(server), { pathname: `/${database}` }).toString();
  const port = await freePort();
  cleanup(async () => {
    await redis.stop();
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });
  return { redis, env: { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, PORT: String(port), QUEUE_PREFIX: `smsgw-start-${port}`, LOG_LEVEL: 'info' } };
}

/** The banner's last line. */
const READY = 'Stop with Ctrl-C.';

function start(env: Record<string, string>, cleanup: (fn: () => Promise<void>) => void): Start {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    detached: true, // its own process group, which Ctrl-C signals as a whole
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  const output: string[] = [];
  const waiting: (() => void)[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      if (line === READY) for (const done of waiting.splice(0)) done();
    });
  }
  return {
    child,
    output,
    up: (ms = 60_000) =>
      new Promise<void>((resolve, reject) => {
        if (output.includes(READY)) return resolve();
        const timer = setTimeout(() => reject(new Error(`start not up within ${ms} ms:\n${output.join('\n')}`)), ms);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/** The demo key and curl lines of the banner. */
function demoKey(output: string[]): string {
  const line = output.find((l) => l.startsWith('Demo API key:'));
  if (!line) throw new Error(`no demo key in:\n${output.join('\n')}`);
  return line.split(':')[1]!.trim();
}

describe.concurrent('./pnpmw start', () => {
  it('Ctrl-C stops every process once and exits 0', async (context) => {
    const cleanup = cleanupsOf(context);
    const { env } = await environment(cleanup);
    const run = start(env, cleanup);
    await run.up();
    process.kill(-run.child.pid!, 'SIGINT'); // the terminal sends it to the whole process group
    const begun = Date.now();
    expect(await exitOf(run.child, 20_000), run.output.join('\n')).toBe(0);
    expect(Date.now() - begun).toBeLessThan(15_000);
    // Error lines, and raw stderr (a stack, "Called end on pool more than once"); warnings of devices
    // whose request met the API already closing are expected.
    expect(summarizeLog(run.output.filter((line) => line.startsWith('{'))).errors).toEqual([]);
    expect(run.output.filter((line) => !line.startsWith('{') && /more than once|Error|^\s+at /.test(line))).toEqual([]);
  });

  it('an idle demo logs fewer than 5 lines a minute at the default level, and prints the banner last', async (context) => {
    const cleanup = cleanupsOf(context);
    const { env } = await environment(cleanup);
    const { LOG_LEVEL: _default, ...defaults } = env;
    const run = start(defaults, cleanup);
    await run.up();
    const banner = run.output.indexOf(READY);
    // Start-up lines come before the banner, so the key is the last thing on the screen.
    expect(run.output.slice(0, banner).some((line) => line.includes('device simulator started'))).toBe(true);
    // The measurement is the minute itself: what the API, dispatcher and demo phone write while nobody sends.
    const before = run.output.length;
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    expect(run.output.slice(before).length).toBeLessThan(5);
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await exitOf(run.child, 20_000)).toBe(0);
  }, 120_000);

  it('a second start on the busy port says so, exits 1 at once, and leaves the first one sending', async (context) => {
    const cleanup = cleanupsOf(context);
    const { env } = await environment(cleanup);
    const first = start(env, cleanup);
    await first.up();
    const key = demoKey(first.output);

    const second = start(env, cleanup);
    expect(await exitOf(second.child, 15_000), second.output.join('\n')).toBe(1);
    expect(second.output.join('\n')).toContain(`Port ${env.PORT} on 127.0.0.1 is in use`);

    // The first instance's demo phone kept its token: a message sent now is delivered.
    const base = `http://127.0.0.1:${env.PORT}`;
    const sent = await fetch(`${base}/api/sms/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ recipients: ['+15551234567'], body: 'still here' }),
    });
    expect(sent.status).toBe(200);
    const [id] = ((await sent.json()) as { message_ids: string[] }).message_ids;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const record = (await (await fetch(`${base}/api/v1/sms/${id}`, { headers: { 'x-api-key': key } })).json()) as { status: string };
      if (record.status === 'delivered') break;
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(record)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    process.kill(-first.child.pid!, 'SIGINT');
    expect(await exitOf(first.child, 20_000)).toBe(0);
  });
});
