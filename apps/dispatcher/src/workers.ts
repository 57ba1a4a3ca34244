import { DelayedError, Worker, type Job } from 'bullmq';
import type { DispatcherConfig } from '@smsgw/config';
import { isUnavailable, type BurstLog } from '@smsgw/core';
import { JOBS, QUEUES, createWorkerConnection, parsePayload, type JobName, type QueueName, type RedisClient, onRedisError } from '@smsgw/queue';
import type { Handler, Handlers } from './handlers/job-handler.ts';
import type { DispatcherMetrics } from './metrics.ts';

// A job that found Postgres or Redis away runs again after this long.
const UNAVAILABLE_RETRY_MS = 1000;

export interface WorkersDeps {
  config: DispatcherConfig;
  incidents: BurstLog;
  metrics: DispatcherMetrics;
  /** True once the dispatcher is shutting down: a job that finds Postgres or Redis away then just fails. */
  stopping: () => boolean;
}

export interface Workers {
  workers: Worker[];
  /** Each queue's worker has a blocking connection of its own. */
  connections: RedisClient[];
}

/**
 * The worker error policy, for every job: the outcome is counted; a job that asks to run later
 * (DelayedError) is let through; a job that found Postgres or Redis away runs again shortly without
 * spending one of its attempts; any other error fails the job, and BullMQ retries it.
 */
async function runJob(handlers: Handlers, deps: WorkersDeps, queue: QueueName, job: Job, token: string | undefined): Promise<unknown> {
  const { metrics, incidents } = deps;
  const name = job.name as JobName;
  if (!(name in JOBS) || JOBS[name].queue !== queue) throw new Error(`No handler for job ${job.name} on queue ${queue}`);
  const handler = handlers[name] as Handler<typeof name>;
  try {
    const result = await handler(parsePayload(name, job.data) as never, job, token);
    metrics.jobs.inc({ job_name: name, outcome: typeof result === 'string' ? result : 'done' });
    return result;
  } catch (error) {
    if (error instanceof DelayedError) {
      metrics.jobs.inc({ job_name: name, outcome: 'delayed' });
      throw error;
    }
    metrics.jobs.inc({ job_name: name, outcome: 'error' });
    // Postgres or Redis away (restarting, failing over): the job is not at fault, so it runs again
    // shortly without spending one of its attempts, however long the outage lasts.
    if (isUnavailable(error) && !deps.stopping()) {
      incidents.report('Postgres or Redis unavailable: jobs run again in a second', error, { queue });
      await job.moveToDelayed(Date.now() + UNAVAILABLE_RETRY_MS, token).catch(() => {
        throw error; // Redis itself is away: BullMQ retries the job when its lock lapses
      });
      throw new DelayedError();
    }
    throw error;
  }
}

/** One worker per queue of the catalog, each on its own connection, running `handlers` under the error policy. */
export function startWorkers(handlers: Handlers, deps: WorkersDeps): Workers {
  const { config, incidents } = deps;
  const workerOptions = {
    prefix: config.QUEUE_PREFIX,
    lockDuration: config.WORKER_LOCK_SECONDS * 1000,
    stalledInterval: config.WORKER_LOCK_SECONDS * 1000,
  };
  const concurrency: Record<QueueName, number> = {
    [QUEUES.dispatch]: config.DISPATCH_CONCURRENCY,
    [QUEUES.reports]: 32,
    [QUEUES.maintenance]: 1,
    [QUEUES.webhooks]: config.WEBHOOK_CONCURRENCY,
  };
  const connections = Object.fromEntries(
    Object.values(QUEUES).map((queue) => {
      const connection = createWorkerConnection(config);
      onRedisError(connection, 'Redis connection failed', (what, error) => incidents.report(what, error));
      return [queue, connection];
    }),
  ) as Record<QueueName, RedisClient>;
  const workers = Object.values(QUEUES).map((queue) => {
    const worker = new Worker(queue, (job, token) => runJob(handlers, deps, queue, job, token), {
      ...workerOptions,
      connection: connections[queue],
      concurrency: concurrency[queue],
    });
    // A job that fails is retried by BullMQ (a lost device report would wait for the sweep): one line per burst and kind.
    worker.on('failed', (job, error) => incidents.report(`job ${job?.name ?? queue} failed`, error, { queue }));
    worker.on('error', (error) => incidents.report(`worker of ${queue} failed`, error));
    return worker;
  });
  return { workers, connections: Object.values(connections) };
}
