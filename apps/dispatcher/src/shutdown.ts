import type { Server } from 'node:http';
import type { Queue, Worker } from 'bullmq';
import type { RedisClient } from '@smsgw/queue';
import type { Logger } from 'pino';
import type { BurstLog } from '@smsgw/core';
import type { Sql } from '@smsgw/db/sql';
import type { SweepSchedule } from './sweep-schedule.ts';

// Time the jobs in hand get to finish on shutdown, and each later step.
const SHUTDOWN_GRACE_MS = 8_000;
const SHUTDOWN_STEP_MS = 2_000;

/** What a running dispatcher holds, in the order shutdown lets go of it. */
export interface Running {
  /** Marks the dispatcher as stopping: jobs in hand stop taking more work. */
  markStopping: () => void;
  schedule: SweepSchedule;
  registration: { close(): Promise<void> };
  workers: Worker[];
  queues: Queue[];
  server: Server | undefined;
  redis: RedisClient;
  workerConnections: RedisClient[];
  sqls: Sql[];
  incidents: BurstLog;
  log: Logger;
}

/**
 * Stops taking jobs and finishes the ones in hand, then closes the connections. Each step has a
 * deadline: with Redis or Postgres away nothing would finish, and a job cut short runs again on
 * another dispatcher once its lock lapses (every handler is a compare-and-set).
 */
export async function shutdown(running: Running): Promise<void> {
  const { workers, log } = running;
  running.markStopping();
  running.schedule.stop();
  await within(running.registration.close(), SHUTDOWN_STEP_MS);
  if (!(await within(Promise.all(workers.map((w) => w.close())), SHUTDOWN_GRACE_MS))) {
    log.warn({ seconds: SHUTDOWN_GRACE_MS / 1000 }, 'jobs in hand did not finish in time: stopping without them (they run again elsewhere)');
    await within(Promise.all(workers.map((w) => w.close(true))), SHUTDOWN_STEP_MS);
  }
  await within(Promise.all(running.queues.map((q) => q.close())), SHUTDOWN_STEP_MS);
  await new Promise((resolve) => (running.server ? running.server.close(resolve) : resolve(undefined)));
  running.redis.disconnect();
  for (const connection of running.workerConnections) connection.disconnect();
  await within(Promise.all(running.sqls.map((sql) => sql.end())), SHUTDOWN_STEP_MS);
  running.incidents.close();
}

/** Whether `promise` settled within `ms` (its failure counts as settled: the step is over either way). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  const result = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return result;
}
