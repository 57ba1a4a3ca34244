import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { freePort } from '../support/cluster.ts';
import { startPrivateRedis } from './support/services.ts';
import { startGateway, summarizeLog, type Gateway } from './support/fixture.ts';

/** Shutdown (issue 11, item 4): prompt, complete, and exit code 0. */
let gateway: Gateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** The exit code (or signal) of a process, when it has exited; `timeout` if not within `ms`. */
function exitOf(child: ChildProcess, ms = 30_000): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
  });
}

describe('shutdown', () => {
  it('the API answers its long polls and ends its event streams at once on SIGTERM, and exits within 5 s', async () => {
    gateway = await startGateway({ devices: 1 });
    const { baseUrl } = gateway.cluster;
    const headers = { authorization: `Bearer ${gateway.tokens[0]}` };
    const longPoll = fetch(`${baseUrl}/api/v1/device/messages?wait=30`, { headers });
    const stream = await fetch(`${baseUrl}/api/v1/device/events`, { headers });
    const streamEnded = stream.text();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the long poll is waiting

    const api = gateway.cluster.processes.get('api')!;
    const start = Date.now();
    api.kill('SIGTERM');
    const poll = await longPoll;
    expect(poll.status).toBe(200);
    expect(await poll.json()).toEqual({ messages: [] });
    await streamEnded;
    expect(await exitOf(api)).toBe(0);
    expect(Date.now() - start).toBeLessThan(5000);
  });

  it('a dispatcher exits within 15 s of SIGTERM while Redis is down', async () => {
    gateway = await startGateway({ devices: 1 });
    await gateway.redis.kill();
    await new Promise((resolve) => setTimeout(resolve, 1000)); // its connections notice
    const dispatcher = gateway.cluster.processes.get('dispatcher-0')!;
    const start = Date.now();
    dispatcher.kill('SIGTERM');
    expect(await exitOf(dispatcher)).toBe(0);
    expect(Date.now() - start).toBeLessThan(15_000);
    const log = summarizeLog(gateway.cluster.output('dispatcher-0'));
    expect(log.raw).toEqual([]);
    expect(log.errors).toEqual([]);
  });

  it('Ctrl-C of `./pnpmw start` stops every process once and exits 0', async () => {
    const redis = await startPrivateRedis();
    const database = `smsgw_start_${randomBytes(4).toString('hex')}`;
    const server = new URL(inject('databaseUrl'));
    const databaseUrl = Object.assign(new URL(server), { pathname: `/${database}` }).toString();
    const port = await freePort();
    const start = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      detached: true,
      env: { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redis.url, PORT: String(port), QUEUE_PREFIX: `smsgw-start-${port}`, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    let ready: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    for (const stream of [start.stdout, start.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        if (line.includes('device simulator started')) ready();
      });
    }
    try {
      const timeout = setTimeout(() => ready(), 60_000);
      await started;
      clearTimeout(timeout);
      expect(output.some((line) => line.includes('device simulator started')), output.join('\n')).toBe(true);
      process.kill(-start.pid!, 'SIGINT'); // the terminal sends it to the whole process group
      const begun = Date.now();
      expect(await exitOf(start, 20_000), output.join('\n')).toBe(0);
      expect(Date.now() - begun).toBeLessThan(15_000);
      // Error lines, and raw stderr (a stack, "Called end on pool more than once"); warnings of devices
      // whose request met the API already closing are expected.
      const log = summarizeLog(output.filter((line) => line.startsWith('{')));
      expect(log.errors).toEqual([]);
      expect(output.filter((line) => !line.startsWith('{') && /more than once|Error|^\s+at /.test(line))).toEqual([]);
    } finally {
      if (start.exitCode === null) process.kill(-start.pid!, 'SIGKILL');
      await redis.stop();
      const client = new pg.Client({ connectionString: server.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
    }
  });
});
