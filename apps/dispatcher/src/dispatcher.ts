import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { listening, sharedSettings, webhookRetryDelays, type DispatcherConfig } from '@smsgw/config';
import { Batcher, BurstLog, isUnavailable, type Resolver } from '@smsgw/core';
import { createSql, parkDeliveries, type DeliveryRef } from '@smsgw/db/sql';
import {
  JOBS, QUEUES, createDispatchQueue, enqueueDispatch, createProducerConnection, createWebhooksQueue, createWorkerConnection, describeDisagreement, enqueueWebhookDeliveries,
  parsePayload, registerProcessSettings,
  type JobName, type JobPayload, type QueueName,
} from '@smsgw/queue';
import { assignDevices, type AssignOutcome } from './handlers/assign-devices.ts';
import { applyDeviceReports } from './handlers/apply-reports.ts';
import { applyRetryableFailures } from './handlers/failover.ts';
import { enqueueDeliveries } from './handlers/enqueue-deliveries.ts';
import { publishStatus } from './handlers/publish-status.ts';
import { sweep } from './handlers/sweep.ts';
import { deliverWebhook } from './webhooks/deliver-webhook.ts';
import { EndpointSlots } from './webhooks/endpoint-slots.ts';
import { DispatcherMetrics } from './metrics.ts';
import { SweepSchedule } from './sweep-schedule.ts';

// A message whose user has no available device is tried again after a quarter of the time it has
// waited so far, between these bounds: quickly after a short outage, rarely during a long one.
const NO_DEVICE_RETRY_MIN_MS = 5_000;
const NO_DEVICE_RETRY_MAX_MS = 300_000;

// Most report jobs (device requests, each up to the device protocol's limit of reports) applied together.
const REPORT_JOBS_PER_BATCH = 64;

// A job that found Postgres or Redis away runs again after this long.
const UNAVAILABLE_RETRY_MS = 1000;

function noDeviceRetryDelay(waitedMs: number): number {
  return Math.min(NO_DEVICE_RETRY_MAX_MS, Math.max(NO_DEVICE_RETRY_MIN_MS, waitedMs / 4));
}

export interface Dispatcher {
  close(): Promise<void>;
}

export interface DispatcherOptions {
  /** Resolves webhook hosts at connect time; tests pass a stub (default: the system's DNS). */
  webhookResolver?: Resolver;
}

type Handler<N extends JobName> = (payload: JobPayload<N>, job: Job, token: string | undefined) => Promise<unknown>;

/** Runs a job again at `at` without counting a BullMQ attempt. */
async function runAgainAt(job: Job, token: string | undefined, at: number): Promise<never> {
  await job.moveToDelayed(at, token);
  throw new DelayedError();
}

/**
 * A dispatcher: workers for the dispatch, reports, webhooks and maintenance queues, and the sweep's
 * schedule. Any number may run at once; they share the round-robin cursor and the queues through Redis.
 */
export async function startDispatcher(config: DispatcherConfig, log: Logger, options: DispatcherOptions = {}): Promise<Dispatcher> {
  const prefix = config.QUEUE_PREFIX;
  // Postgres or Redis away, locks lost after a stall: expected, so logged once per burst with a count.
  const incidents = new BurstLog(log);
  const onIdleError = (error: Error) => incidents.report('idle Postgres connection failed', error);
  const sql = createSql({ url: config.DATABASE_URL, poolSize: 10, onIdleError });
  // Webhook deliveries have connections of their own: a burst of them never makes messages wait for one.
  const webhookSql = createSql({ url: config.DATABASE_URL, poolSize: 4, onIdleError });
  const redis = createProducerConnection(config.REDIS_URL, { lazyConnect: true });
  redis.on('error', (error: Error) => incidents.report('Redis connection failed', error));
  await redis.connect();
  const dispatchQueue = createDispatchQueue(redis, prefix);
  const maintenanceQueue = new Queue(QUEUES.maintenance, { connection: redis, prefix });
  const webhooksQueue = createWebhooksQueue(redis, prefix);
  // Without a listener BullMQ writes a queue's connection errors to stderr, a stack each.
  for (const queue of [dispatchQueue, maintenanceQueue, webhooksQueue]) queue.on('error', (error) => incidents.report('Redis connection failed', error));
  let stopping = false;
  // Deliveries parked in the same moment are recorded with one statement.
  const parker = new Batcher<{ id: string; parkedAt: Date }, undefined>(async (parked) => {
    await parkDeliveries(webhookSql, parked, new Date(Date.now() + config.WEBHOOK_PARKED_RECHECK_SECONDS * 1000));
    return parked.map(() => undefined);
  }, 1000);
  // A slot outlives the longest request, so that only a dead dispatcher's slots lapse.
  const slots = new EndpointSlots(redis, prefix, config.WEBHOOK_ENDPOINT_CONCURRENCY, config.WEBHOOK_TIMEOUT_MS + 5000);
  const deliverDeps = {
    park: (id: string) => parker.add({ id, parkedAt: new Date() }),
    enqueue: (deliveries: DeliveryRef[], at?: number) => enqueueWebhookDeliveries(webhooksQueue, deliveries, at),
    stopping: () => stopping,
    sql: webhookSql,
    config,
    log,
    slots,
    policy: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, ...(options.webhookResolver && { resolve: options.webhookResolver }) },
    retryDelays: webhookRetryDelays(config),
  };

  const metrics = new DispatcherMetrics();
  const metricsAddress = { host: config.METRICS_HOST, port: config.METRICS_PORT, hostVariable: 'METRICS_HOST', portVariable: 'METRICS_PORT' };
  const server = config.METRICS_PORT > 0 ? await listening(() => metrics.serve(config.METRICS_HOST, config.METRICS_PORT), metricsAddress) : undefined;
  const assigner = new Batcher<string, AssignOutcome>(async (ids) => {
    metrics.assignBatch.observe(ids.length);
    const outcomes = await assignDevices({ sql, redis, webhooksQueue, config, log }, ids);
    metrics.transitions.inc({ state: 'assigned' }, outcomes.filter((o) => o === 'assigned').length);
    return outcomes;
  }, config.DISPATCH_BATCH_SIZE);

  /** The payloads' retryable failures: back to round-robin (enqueued here) or failed for good. */
  const failOverReports = async (payloads: JobPayload<'device.reports'>[]): Promise<string[]> => {
    const failover = await applyRetryableFailures({ sql, config }, payloads);
    metrics.transitions.inc({ state: 'pending' }, failover.retried.length);
    metrics.transitions.inc({ state: 'failed' }, failover.failed.length);
    if (failover.quarantined.length > 0) log.warn({ devices: failover.quarantined }, 'devices quarantined after retryable failures in a row');
    // If Redis refuses the jobs, the outbox sweep enqueues the pending messages.
    if (failover.retried.length > 0) await enqueueDispatch(dispatchQueue, failover.retried).catch((error: unknown) => incidents.report('failover enqueue failed: left to the outbox sweep', error));
    await enqueueDeliveries(webhooksQueue, log, failover.deliveries);
    await publishStatus({ sql, redis, config, log }, [...failover.retried, ...failover.failed]);
    return [...failover.retried, ...failover.failed];
  };
  // The report jobs taken together (one per device request) are applied together: one statement
  // per lifecycle step for all of them. Each job's result is the number of its reports that applied.
  const reporter = new Batcher<JobPayload<'device.reports'>, number>(async (payloads) => {
    const { applied, deliveries } = await applyDeviceReports(sql, payloads);
    for (const { status } of applied) metrics.transitions.inc({ state: status });
    await enqueueDeliveries(webhooksQueue, log, deliveries);
    await publishStatus({ sql, redis, config, log }, applied.map((a) => a.id));
    const moved = new Set([...applied.map((a) => a.id), ...(await failOverReports(payloads))]);
    return payloads.map((payload) => payload.reports.filter((r) => moved.has(r.id)).length);
  }, REPORT_JOBS_PER_BATCH);

  // One handler per job of the catalog: a job name without a handler does not compile.
  const handlers: { [N in JobName]: Handler<N> } = {
    'message.dispatch': async ({ messageId }, job, token) => {
      const outcome = await assigner.add(messageId);
      if (typeof outcome === 'object') return runAgainAt(job, token, Date.now() + outcome.waitMs);
      if (outcome === 'no_device') return runAgainAt(job, token, Date.now() + noDeviceRetryDelay(Date.now() - job.timestamp));
      return outcome;
    },
    'device.reports': (payload) => reporter.add(payload),
    'webhook.deliver': async ({ deliveryId, webhookId }, job, token) => {
      const result = await deliverWebhook(deliverDeps, { deliveryId, webhookId, slotToken: `${job.id}:${token}` });
      if (result.outcome === 'attempted' && result.retryAt !== undefined) return runAgainAt(job, token, result.retryAt);
      return result.outcome;
    },
    'maintenance.sweep': async () => {
      const result = await sweep({ sql, redis, dispatchQueue, webhooksQueue, slots, config, log });
      if (Object.values(result).some((n) => n > 0)) log.info({ sweep: result }, 'sweep');
      return result;
    },
  };

  const workerOptions = {
    prefix,
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
      const connection = createWorkerConnection(config.REDIS_URL);
      connection.on('error', (error: Error) => incidents.report('Redis connection failed', error));
      return [queue, connection];
    }),
  ) as Record<QueueName, ReturnType<typeof createWorkerConnection>>;
  const workers = Object.values(QUEUES).map((queue) => {
    const worker = new Worker(
      queue,
      async (job, token) => {
        const name = job.name as JobName;
        if (!(name in JOBS) || JOBS[name].queue !== queue) throw new Error(`No handler for job ${job.name} on queue ${queue}`);
        const handler = handlers[name] as Handler<typeof name>;
        try {
          const result = await handler(parsePayload(name, job.data) as never, job, token);
          metrics.jobs.inc({ job: name, outcome: typeof result === 'string' ? result : 'done' });
          return result;
        } catch (error) {
          if (error instanceof DelayedError) {
            metrics.jobs.inc({ job: name, outcome: 'delayed' });
            throw error;
          }
          metrics.jobs.inc({ job: name, outcome: 'error' });
          // Postgres or Redis away (restarting, failing over): the job is not at fault, so it runs again
          // shortly without spending one of its attempts, however long the outage lasts.
          if (isUnavailable(error) && !stopping) {
            incidents.report('Postgres or Redis unavailable: jobs run again in a second', error, { queue });
            await job.moveToDelayed(Date.now() + UNAVAILABLE_RETRY_MS, token).catch(() => {
              throw error; // Redis itself is away: BullMQ retries the job when its lock lapses
            });
            throw new DelayedError();
          }
          throw error;
        }
      },
      { ...workerOptions, connection: connections[queue], concurrency: concurrency[queue] },
    );
    // A job that fails is retried by BullMQ (a lost device report would wait for the sweep): one line per burst and kind.
    worker.on('failed', (job, error) => incidents.report(`job ${job?.name ?? queue} failed`, error, { queue }));
    worker.on('error', (error) => incidents.report(`worker of ${queue} failed`, error));
    return worker;
  });

  const schedule = new SweepSchedule(maintenanceQueue, config.SWEEP_INTERVAL_SECONDS * 1000, log);
  await schedule.start(Math.max(2000, config.SWEEP_INTERVAL_SECONDS * 2000));
  const registration = await registerProcessSettings(redis, { prefix, service: 'dispatcher', settings: sharedSettings(config) });
  for (const disagreement of registration.disagreements) log.error(describeDisagreement(disagreement));
  log.info({ prefix, concurrency: config.DISPATCH_CONCURRENCY }, 'dispatcher started');

  let closing: Promise<void> | undefined;
  return {
    // Once, however many signals arrive (Ctrl-C sends SIGINT to `./pnpmw start` and its children alike).
    close() {
      closing ??= (async () => {
        // Stop taking jobs and finish the ones in hand, then close the connections. Each step has a
        // deadline: with Redis or Postgres away nothing would finish, and a job cut short runs again
        // on another dispatcher once its lock lapses (every handler is a compare-and-set).
        stopping = true;
        schedule.stop();
        await within(registration.close(), SHUTDOWN_STEP_MS);
        if (!(await within(Promise.all(workers.map((w) => w.close())), SHUTDOWN_GRACE_MS))) {
          log.warn({ seconds: SHUTDOWN_GRACE_MS / 1000 }, 'jobs in hand did not finish in time: stopping without them (they run again elsewhere)');
          await within(Promise.all(workers.map((w) => w.close(true))), SHUTDOWN_STEP_MS);
        }
        await within(Promise.all([dispatchQueue.close(), maintenanceQueue.close(), webhooksQueue.close()]), SHUTDOWN_STEP_MS);
        await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
        redis.disconnect();
        for (const connection of Object.values(connections)) connection.disconnect();
        await within(Promise.all([sql.end(), webhookSql.end()]), SHUTDOWN_STEP_MS);
        incidents.close();
      })();
      return closing;
    },
  };
}

// Time the jobs in hand get to finish on shutdown, and each later step.
const SHUTDOWN_GRACE_MS = 8_000;
const SHUTDOWN_STEP_MS = 2_000;

/** Whether `promise` settled within `ms` (its failure counts as settled: the step is over either way). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(() => true as const, () => true as const);
  const result = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return result;
}
