import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { listening, sharedSettings, type DispatcherConfig } from '@smsgw/config';
import { BurstLog, type Resolver } from '@smsgw/core';
import { createSql } from '@smsgw/db/sql';
import {
  QUEUES,
  createDispatchQueue,
  createProducerConnection,
  createWebhooksQueue,
  describeDisagreement,
  registerProcessSettings,
  withKeyPrefix,
  onRedisError,
} from '@smsgw/queue';
import { deviceReportsHandlers } from './handlers/device-reports.ts';
import { dispatchHandler } from './handlers/dispatch.ts';
import type { Handlers } from './handlers/job-handler.ts';
import { sweepHandler } from './handlers/sweep.ts';
import { webhookDeliveryHandler } from './handlers/webhook-delivery.ts';
import { EndpointSlots } from './webhooks/endpoint-slots.ts';
import { DispatcherMetrics } from './metrics.ts';
import { shutdown } from './shutdown.ts';
import { SweepSchedule } from './sweep-schedule.ts';
import { startWorkers } from './workers.ts';

export interface Dispatcher {
  close(): Promise<void>;
}

export interface DispatcherOptions {
  /** Resolves webhook hosts at connect time; tests pass a stub (default: the system's DNS). */
  webhookResolver?: Resolver;
}

/**
 * A dispatcher: workers for the dispatch, reports, webhooks and maintenance queues, and the sweep's
 * schedule. Any number may run at once; they share the round-robin cursor and the queues through Redis.
 * This function only wires: each job's handler is in handlers/, the worker error policy in
 * workers.ts, and shutdown in shutdown.ts.
 */
export async function startDispatcher(environment: DispatcherConfig, log: Logger, options: DispatcherOptions = {}): Promise<Dispatcher> {
  // On a Redis Cluster QUEUE_PREFIX becomes a hash tag, so that every key is in one slot.
  const config = withKeyPrefix(environment);
  const prefix = config.QUEUE_PREFIX;
  // Postgres or Redis away, locks lost after a stall: expected, so logged once per burst with a count.
  const incidents = new BurstLog(log);
  const onIdleError = (error: Error) => incidents.report('idle Postgres connection failed', error);
  const sql = createSql({ url: config.DATABASE_URL, poolSize: 10, onIdleError });
  // Webhook deliveries have connections of their own: a burst of them never makes messages wait for one.
  const webhookSql = createSql({ url: config.DATABASE_URL, poolSize: 4, onIdleError });
  const redis = createProducerConnection(config, { lazyConnect: true });
  onRedisError(redis, 'Redis connection failed', (what, error) => incidents.report(what, error));
  await redis.connect();
  const dispatchQueue = createDispatchQueue(redis, prefix);
  const maintenanceQueue = new Queue(QUEUES.maintenance, { connection: redis, prefix });
  const webhooksQueue = createWebhooksQueue(redis, prefix);
  // Without a listener BullMQ writes a queue's connection errors to stderr, a stack each.
  for (const queue of [dispatchQueue, maintenanceQueue, webhooksQueue]) queue.on('error', (error) => incidents.report('Redis connection failed', error));
  let stopping = false;
  // A slot outlives the longest request, so that only a dead dispatcher's slots lapse.
  const slots = new EndpointSlots(redis, prefix, config.WEBHOOK_ENDPOINT_CONCURRENCY, config.WEBHOOK_TIMEOUT_MS + 5000);

  const metrics = new DispatcherMetrics();
  const metricsAddress = { host: config.METRICS_HOST, port: config.METRICS_PORT, hostVariable: 'METRICS_HOST', portVariable: 'METRICS_PORT' };
  const server = config.METRICS_PORT > 0 ? await listening(() => metrics.serve(config.METRICS_HOST, config.METRICS_PORT), metricsAddress) : undefined;

  const handlers: Handlers = {
    'message.dispatch': dispatchHandler({ sql, redis, webhooksQueue, config, log, metrics }),
    ...deviceReportsHandlers({ sql, redis, dispatchQueue, webhooksQueue, config, log, incidents, metrics }),
    'webhook.deliver': webhookDeliveryHandler({
      sql: webhookSql,
      redis,
      dispatchQueue,
      webhooksQueue,
      slots,
      config,
      log,
      incidents,
      stopping: () => stopping,
      resolver: options.webhookResolver,
      metrics,
    }),
    'maintenance.sweep': sweepHandler({ sql, redis, dispatchQueue, webhooksQueue, slots, config, log }),
  };
  const { workers, connections } = startWorkers(handlers, { config, incidents, metrics, stopping: () => stopping });

  const schedule = new SweepSchedule(maintenanceQueue, config.SWEEP_INTERVAL_SECONDS * 1000, log);
  await schedule.start(Math.max(2000, config.SWEEP_INTERVAL_SECONDS * 2000));
  const registration = await registerProcessSettings(redis, { prefix, service: 'dispatcher', settings: sharedSettings(config) });
  for (const disagreement of registration.disagreements) log.error(describeDisagreement(disagreement));
  log.info({ prefix, concurrency: config.DISPATCH_CONCURRENCY }, 'dispatcher started');

  let closing: Promise<void> | undefined;
  return {
    // Once, however many signals arrive (Ctrl-C sends SIGINT to `./pnpmw start` and its children alike).
    close() {
      closing ??= shutdown({
        markStopping: () => (stopping = true),
        schedule,
        registration,
        workers,
        queues: [dispatchQueue, maintenanceQueue, webhooksQueue],
        server,
        redis,
        workerConnections: connections,
        sqls: [sql, webhookSql],
        incidents,
        log,
      });
      return closing;
    },
  };
}
