import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';
import { createApiKey, createDevice, createUser } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { sentIds, type Cluster } from '../../support/cluster.ts';
import { e2ePerTest, type E2e } from '../../support/e2e-fixture.ts';
import { privatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './services.ts';

/**
 * One gateway for a fault test: a database of its own on the private cluster, a private Redis, the
 * real processes, a user with an API key and native simulated devices.
 */
export interface Gateway {
  cluster: Cluster;
  redis: PrivateRedis;
  postgres: PrivatePostgres;
  databaseUrl: string;
  key: string;
  /** The simulated devices' tokens. */
  tokens: string[];
  logDir: string;
  /** Every HTTP status a `send` got, in order. */
  statuses: number[];
  /** POST /api/sms/send with an Idempotency-Key, retried on 503 and on refused connections until accepted. */
  send(recipients: string[], options?: { retryForMs?: number; idempotencyKey?: string }): Promise<string[]>;
  /** Counts of the user's messages by status. */
  counts(): Promise<Record<string, number>>;
  waitForDelivered(count: number, timeoutMs: number): Promise<void>;
  /** Message ids the simulated devices sent, with repeats. */
  sent(): Promise<string[]>;
}

export interface GatewayOptions {
  devices?: number;
  dispatchers?: number;
  env?: Record<string, string>;
  /** The simulated devices' environment, over the fixture's. */
  simEnv?: Record<string, string>;
}

/** Starts gateways for the tests of a file, each closed after its test. */
export function gatewayPerTest(): (options?: GatewayOptions) => Promise<Gateway> {
  const openE2e = e2ePerTest('faults');
  return async (options) => startGateway(await openE2e(), options);
}

async function startGateway(e2e: E2e, options: GatewayOptions = {}): Promise<Gateway> {
  const { name, port } = inject('postgresCluster');
  const postgres = privatePostgres(name, port);
  const { database, logDir } = e2e;
  // A client of its own, closed before the tests restart Postgres under the processes.
  const db = createDb({ url: database.url, poolSize: 1 });
  const user = await createUser(db, { name: 'faults', monthlyQuota: 1_000_000 });
  const { key } = await createApiKey(db, { userId: user.id, name: 'faults' });
  const tokens: string[] = [];
  for (let i = 0; i < (options.devices ?? 2); i++) tokens.push((await createDevice(db, { userId: user.id, name: `sim-${i}` })).token);
  await db.$disconnect();

  const redis = await startPrivateRedis();
  e2e.defer(() => redis.stop());
  const cluster = await e2e.startCluster({
    dispatchers: options.dispatchers ?? 1,
    deviceTokens: tokens,
    env: { REDIS_URL: redis.url, LOG_LEVEL: 'info', WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '1', OUTBOX_AGE_SECONDS: '2', ...options.env },
    simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '10', SIM_POLL_SECONDS: '2', ...options.simEnv },
  });
  // If a test left it stopped: the processes' clean-up removes the queues' keys.
  e2e.defer(() => redis.start());

  // The dispatchers are up once they logged so (the cluster waits for the API and the devices only).
  for (let i = 0; i < (options.dispatchers ?? 1); i++) {
    const deadline = Date.now() + 30_000;
    while (!cluster.output(`dispatcher-${i}`).some((line) => line.includes('dispatcher started'))) {
      if (Date.now() > deadline) throw new Error(`dispatcher-${i} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const statuses: number[] = [];
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  pool.on('error', () => undefined);
  e2e.defer(() => pool.end());

  async function counts(): Promise<Record<string, number>> {
    for (;;) {
      try {
        const { rows } = await pool.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM messages GROUP BY state');
        return Object.fromEntries(rows.map((r) => [r.state, r.n]));
      } catch (error) {
        // Postgres restarting: try again; anything else is a fault of the test.
        if (!/terminat|ECONNREFUSED|shutting down|starting up|not yet accepting|Connection/i.test(String(error))) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  return {
    cluster,
    redis,
    postgres,
    databaseUrl: database.url,
    key,
    tokens,
    logDir,
    statuses,
    counts,
    async send(recipients, { retryForMs = 60_000, idempotencyKey = randomBytes(8).toString('hex') } = {}) {
      const deadline = Date.now() + retryForMs;
      for (;;) {
        const response = await fetch(`${cluster.baseUrl}/api/sms/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': idempotencyKey },
          body: JSON.stringify({ recipients, body: 'fault suite' }),
        }).catch(() => null);
        if (response) statuses.push(response.status);
        if (response?.ok) return ((await response.json()) as { message_ids: string[] }).message_ids;
        if (response && response.status !== 503 && response.status !== 409) {
          await new Promise((resolve) => setTimeout(resolve, 500)); // the API's log line arrives
          const errors = summarizeLog(cluster.output('api')).errorLines.join('\n');
          throw new Error(`send answered ${response.status}: ${await response.text()}\nThe API's errors:\n${errors}`);
        }
        if (Date.now() > deadline) throw new Error(`send not accepted within ${retryForMs} ms`);
        const retryAfter = Number(response?.headers.get('retry-after') ?? 1);
        await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter, 1) * 1000));
      }
    },
    async waitForDelivered(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = await counts();
        if ((now.delivered ?? 0) >= count) return;
        if (Date.now() > deadline) throw new Error(`${now.delivered ?? 0} of ${count} delivered within ${timeoutMs} ms: ${JSON.stringify(now)}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    sent: () => sentIds(logDir),
  };
}

export interface LogSummary {
  /** Lines by pino level name (trace … fatal). */
  levels: Record<string, number>;
  /** Lines that are not pino JSON (raw stderr). */
  raw: string[];
  /** The messages of lines at error level or above. */
  errors: string[];
  /** Those lines whole, for a failure's report. */
  errorLines: string[];
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** What a process logged, from `lines` (cluster.output). */
export function summarizeLog(lines: string[]): LogSummary {
  const summary: LogSummary = { levels: {}, raw: [], errors: [], errorLines: [] };
  for (const line of lines) {
    let entry: { level?: number; msg?: string };
    try {
      entry = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      summary.raw.push(line);
      continue;
    }
    const level = LEVELS[entry.level ?? 0] ?? 'unknown';
    summary.levels[level] = (summary.levels[level] ?? 0) + 1;
    if ((entry.level ?? 0) >= 50) {
      summary.errors.push(entry.msg ?? line);
      summary.errorLines.push(line.slice(0, 3000));
    }
  }
  return summary;
}

/** Phone numbers `+1555…` from `start`, `count` of them. */
export function numbers(start: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `+1555${String(start + i).padStart(7, '0')}`);
}

/** The exit code (or signal) of a process, when it has exited; `timeout` if not within `ms`. */
export function exitOf(child: ChildProcess, ms = 30_000): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
  });
}
