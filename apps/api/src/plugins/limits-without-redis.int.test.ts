import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { createTestUser, send as sendSms, startTestApi, type TestApi, uniquePhone } from '../testing/test-api.ts';
import { phoneOwner, phoneRequest } from '../testing/test-phone.ts';
import { reportsOfJob } from '@smsgw/queue';

/**
 * The limits when Redis stalls or goes away, on a Redis server of this file's own: pausing the
 * shared one would stall the other test files running at the same time.
 */

const TIMEOUT_MS = 200;
// Long enough that a request held until its end is told apart from one that gave up on Redis.
const PAUSE_MS = 3000;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts `redis-server` without persistence and resolves once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  child.stdout!.resume();
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

let port: number;
let redisServer: ChildProcess;
let control: Redis;
let api: TestApi;

beforeAll(async () => {
  port = await freePort();
  redisServer = await startRedis(port);
  control = new Redis(port, '127.0.0.1');
  control.on('error', () => undefined);
  api = await startTestApi({
    REDIS_URL: `redis://127.0.0.1:${port}`,
    RATE_LIMIT_TIMEOUT_MS: String(TIMEOUT_MS),
    // Limits that the requests below would pass if Redis counted them.
    AUTH_FAILURES_PER_MINUTE: '1',
    RATE_LIMIT_PER_MINUTE: '2',
  });
});
afterAll(async () => {
  await api?.close();
  control?.disconnect();
  if (redisServer) await stopRedis(redisServer);
});

/** A request through inject, with how long it took. */
async function timed(request: InjectOptions) {
  const started = performance.now();
  const res = await api.app.inject(request);
  return { status: res.statusCode, ms: performance.now() - started };
}

describe('when Redis stalls', () => {
  it('answers health, readiness (503), accepted and refused credentials within bounded time while Redis is paused (CLIENT PAUSE ALL)', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const read: InjectOptions = { method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': apiKey }, remoteAddress: '10.55.0.2' };
    expect((await timed(read)).status).toBe(200);
    await control.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
    try {
      const [health, ready, accepted, refused] = await Promise.all([
        timed({ method: 'GET', url: '/health' }),
        timed({ method: 'GET', url: '/ready' }),
        timed(read),
        timed({ method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': 'smsgw_sk_wrong' }, remoteAddress: '10.55.0.3' }),
      ]);
      // Each would take the whole pause if it waited for Redis: /health touches no Redis, a request
      // waits for two or three counters of TIMEOUT_MS, /ready for its one-second check.
      const within = (res: { status: number; ms: number }, ms: number) => ({ status: res.status, inTime: res.ms < ms });
      expect({ health: within(health, 1000), ready: within(ready, 2000), accepted: within(accepted, 1500), refused: within(refused, 1500) }).toEqual({
        health: { status: 200, inTime: true },
        ready: { status: 503, inTime: true },
        accepted: { status: 200, inTime: true },
        refused: { status: 401, inTime: true },
      });
    } finally {
      // Waits for the end of the pause: a paused server holds this command too.
      await control.call('CLIENT', 'UNPAUSE');
    }
  });
});

/** Two phones, and a `PATCH /message` of `count` at once (alternating phones), each a `Delivered` snapshot of a message assigned to it. */
async function concurrentSnapshots(count: number) {
  const phones = await Promise.all([phoneOwner(api.app, api.db), phoneOwner(api.app, api.db)]);
  const idsOf = await Promise.all(
    phones.map(async ({ apiKey, phone }) => {
      const res = await sendSms(api.app, apiKey, {
        recipients: Array.from({ length: count / 2 }, () => uniquePhone()),
        body: 'coalesced',
        device_id: phone.id,
      });
      const ids = res.json().message_ids as string[];
      await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: phone.id })), now: new Date() });
      return ids;
    }),
  );
  // Snapshots of a phone's own messages: another's would be ignored, and nothing queued.
  const ids = Array.from({ length: count }, (_, i) => idsOf[i % 2]![Math.floor(i / 2)]!);
  const send = () =>
    ids.map((id, i) =>
      phoneRequest(api.app, 'PATCH', '/mobile/v1/message', {
        authorization: `Bearer ${phones[i % 2]!.phone.token}`,
        body: [{ id, state: 'Delivered', recipients: [{ phoneNumber: '+15550100', state: 'Delivered' }], states: {} }],
      }),
    );
  // Once each, so that the phones' tokens are known before the requests that count.
  for (const { phone } of phones) await phoneRequest(api.app, 'PATCH', '/mobile/v1/message', { authorization: `Bearer ${phone.token}`, body: [] });
  return { ids, send };
}

/** The message ids of the report jobs in Redis. */
async function queuedIds(): Promise<string[]> {
  const jobs = await api.app.reportsQueue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'paused']);
  return jobs.flatMap(reportsOfJob).flatMap((p) => p.reports.map((r) => r.id));
}

describe('device reports, coalesced across requests (plugins/report-intake.ts)', () => {
  it('answers concurrent PATCH /message of several phones only once Redis holds their reports, in fewer enqueues than requests', async () => {
    const { ids, send } = await concurrentSnapshots(24);
    const enqueues = vi.spyOn(api.app.reportsQueue, 'addBulk');
    await control.call('CLIENT', 'PAUSE', '800', 'WRITE');
    const started = performance.now();
    const requests = send();
    const answered: number[] = [];
    for (const request of requests) void request.then(() => answered.push(performance.now() - started));
    const statuses = (await Promise.all(requests)).map((res) => res.statusCode);

    expect(statuses).toEqual(ids.map(() => 204));
    // None was answered while Redis held back the writes.
    expect(Math.min(...answered)).toBeGreaterThan(600);
    expect(enqueues.mock.calls.length).toBeLessThan(ids.length / 4);
    const queued = new Set(await queuedIds());
    expect(ids.filter((id) => !queued.has(id))).toEqual([]);
    enqueues.mockRestore();
  });

  it('answers 503 to every request of an enqueue that Redis refuses', async () => {
    const { ids, send } = await concurrentSnapshots(12);
    await stopRedis(redisServer);
    try {
      const answers = await Promise.all(send());
      expect(answers.map((res) => res.statusCode)).toEqual(ids.map(() => 503));
      expect(answers[0]!.json()).toMatchObject({ error: 'service_unavailable' });
    } finally {
      redisServer = await startRedis(port);
      await vi.waitFor(() => expect(api.app.redis.status).toBe('ready'), { timeout: 10_000 });
    }
  });
});

describe('when Redis is away', () => {
  const list = (headers: Record<string, string>) => timed({ method: 'GET', url: '/api/v1/sms', headers, remoteAddress: '10.55.0.1' });

  it('authenticates, refuses with 401 and serves requests, unlimited, and limits again once Redis is back', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    await stopRedis(redisServer);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const [accepted, refused] = await Promise.all([list({ 'x-api-key': apiKey }), list({ 'x-api-key': 'smsgw_sk_wrong' })]);
        statuses.push(accepted.status, refused.status);
        expect(Math.max(accepted.ms, refused.ms)).toBeLessThan(1500);
      }
      expect(statuses).toEqual([200, 401, 200, 401, 200, 401]);
    } finally {
      // Back on the same port: the connections come back (and close() can clean up).
      redisServer = await startRedis(port);
      await vi.waitFor(() => expect([api.app.redis.status, api.app.limiterRedis.status]).toEqual(['ready', 'ready']), { timeout: 10_000 });
    }
    // Counting again: the second refusal is over AUTH_FAILURES_PER_MINUTE (1); valid keys are still served.
    const back = [await list({ 'x-api-key': 'smsgw_sk_wrong' }), await list({ 'x-api-key': 'smsgw_sk_wrong' }), await list({ 'x-api-key': apiKey })];
    expect(back.map((res) => res.status)).toEqual([401, 429, 200]);
  });
});
