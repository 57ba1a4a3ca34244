import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createDevice } from '@smsgw/db';
import { sentIds, type Cluster } from '../../support/cluster.ts';
import type { E2e } from '../../support/e2e-fixture.ts';
import { numbers, summarizeLog } from '../../faults/support/fixture.ts';

/**
 * smsgw's real processes on a Redis topology (the environment `redis` names a cluster or Sentinels):
 * an API, dispatchers and native simulated devices on a database of the test's own, a user with
 * an API key, and the sends of the test with every answer they got.
 */
export interface TopologyGateway {
  cluster: Cluster;
  /** QUEUE_PREFIX of the processes (on a cluster they use it as a hash tag, `{…}`). */
  prefix: string;
  key: string;
  userId: string;
  databaseUrl: string;
  /** Every answer to a send, in order. */
  answers: SendAnswer[];
  /**
   * POST /api/sms/send to `api` (default: the first API) with an Idempotency-Key, sent again with
   * the same key after a 503 or a refused connection, until accepted; the message ids.
   */
  send(recipients: string[], options?: { idempotencyKey?: string; api?: string; retryForMs?: number }): Promise<string[]>;
  /** Counts of the user's messages by state. */
  counts(): Promise<Record<string, number>>;
  waitForDelivered(count: number, timeoutMs: number): Promise<void>;
  /** Message ids the simulated devices sent, with repeats. */
  sent(): Promise<string[]>;
}

export interface SendAnswer {
  key: string;
  status: number | 'connection refused';
  retryAfter: string | null;
  at: number;
}

export interface TopologyGatewayOptions {
  /** REDIS_CLUSTER_NODES, or REDIS_SENTINELS and REDIS_SENTINEL_NAME (and REDIS_WAIT_REPLICAS, …). */
  redis: Record<string, string>;
  devices?: number;
  dispatchers?: number;
  env?: Record<string, string>;
  simEnv?: Record<string, string>;
}

export async function startTopologyGateway(e2e: E2e, options: TopologyGatewayOptions): Promise<TopologyGateway> {
  const { user, key } = await e2e.user('topologies', 1_000_000);
  const tokens: string[] = [];
  for (let i = 0; i < (options.devices ?? 2); i++) tokens.push((await createDevice(e2e.db, { userId: user.id, name: `sim-${i}` })).token);
  const dispatchers = options.dispatchers ?? 2;
  // A prefix the test knows, to find the slot of its keys (the Redis servers are the test's own).
  const prefix = `smsgw-topologies-${randomBytes(4).toString('hex')}`;
  const cluster = await e2e.startCluster({
    dispatchers,
    deviceTokens: tokens,
    env: {
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'info',
      WORKER_LOCK_SECONDS: '3',
      SWEEP_INTERVAL_SECONDS: '1',
      OUTBOX_AGE_SECONDS: '2',
      ...options.redis,
      ...options.env,
    },
    // Sent and delivered in one report: a report lost loses the message's last word.
    simEnv: { LOG_LEVEL: 'info', SIM_SEND_MS: '2', SIM_DELIVER_MS: '0', SIM_POLL_SECONDS: '2', ...options.simEnv },
  });
  for (let i = 0; i < dispatchers; i++) {
    const deadline = Date.now() + 30_000;
    while (!cluster.output(`dispatcher-${i}`).some((line) => line.includes('dispatcher started'))) {
      if (Date.now() > deadline) throw new Error(`dispatcher-${i} did not start:\n${cluster.output(`dispatcher-${i}`).join('\n')}`);
      await sleep(50);
    }
  }

  const pool = new pg.Pool({ connectionString: e2e.database.url, max: 1 });
  e2e.defer(() => pool.end());
  const answers: SendAnswer[] = [];

  async function counts(): Promise<Record<string, number>> {
    const { rows } = await pool.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM messages GROUP BY state');
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  return {
    cluster,
    prefix,
    key,
    userId: user.id,
    databaseUrl: e2e.database.url,
    answers,
    counts,
    async send(recipients, { idempotencyKey = randomBytes(8).toString('hex'), api = cluster.baseUrl, retryForMs = 60_000 } = {}) {
      const deadline = Date.now() + retryForMs;
      for (;;) {
        const response = await fetch(`${api}/api/sms/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': idempotencyKey },
          body: JSON.stringify({ recipients, body: 'topologies' }),
        }).catch(() => null);
        answers.push({
          key: idempotencyKey,
          status: response?.status ?? 'connection refused',
          retryAfter: response?.headers.get('retry-after') ?? null,
          at: Date.now(),
        });
        if (response?.ok) return ((await response.json()) as { message_ids: string[] }).message_ids;
        if (response && response.status !== 503) {
          await sleep(500); // the API's log line arrives
          const errors = summarizeLog(cluster.output('api')).errorLines.join('\n');
          throw new Error(`send answered ${response.status}: ${await response.text()}\nThe API's errors:\n${errors}`);
        }
        if (Date.now() > deadline) throw new Error(`send not accepted within ${retryForMs} ms`);
        await sleep(Math.min(Number(response?.headers.get('retry-after') ?? 1), 1) * 1000);
      }
    },
    async waitForDelivered(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = await counts();
        if ((now.delivered ?? 0) >= count) return;
        if (Date.now() > deadline) throw new Error(`${now.delivered ?? 0} of ${count} delivered within ${timeoutMs} ms: ${JSON.stringify(now)}`);
        await sleep(250);
      }
    },
    sent: () => sentIds(e2e.logDir),
  };
}

/**
 * Sends `size` messages every `everyMs` from `lanes` loops at once until `stop` says so, each
 * send retried with its key until accepted; the ids of every message accepted.
 */
export async function sendUnderLoad(
  gateway: TopologyGateway,
  options: { lanes: number; size: number; everyMs: number; stop: () => boolean },
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.lanes }, async () => {
      while (!options.stop()) {
        const start = next;
        next += options.size;
        ids.push(...(await gateway.send(numbers(start, options.size))));
        await sleep(options.everyMs);
      }
    }),
  );
  return ids;
}

/**
 * What the simulated devices were answered when a request of theirs failed (their `… failed`
 * warnings): the HTTP status, or the error's message when no answer came.
 */
export function deviceFailures(lines: string[]): string[] {
  return lines.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { status?: number; message?: string } };
      if (!entry.msg?.endsWith(' failed') || !entry.err) return [];
      return [entry.err.status !== undefined ? String(entry.err.status) : (entry.err.message ?? 'unknown')];
    } catch {
      return [];
    }
  });
}
