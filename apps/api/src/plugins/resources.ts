import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sharedSettings, type ApiConfig } from '@smsgw/config';
import { createListingSql, createSql, type ListingSql, type Sql } from '@smsgw/db';
import { BurstLog, type TargetPolicy } from '@smsgw/core';
import {
  ReplicaWait,
  createDispatchQueue,
  createProducerConnection,
  createReportsQueue,
  createWebhooksQueue,
  describeDisagreement,
  duplicateConnection,
  registerProcessSettings,
  replicaWaitTimeoutMs,
  replicasToWait,
  withKeyPrefix,
  type DispatchQueue,
  type RedisClient,
  type ReportsQueue,
  type WebhooksQueue,
  onRedisError,
} from '@smsgw/queue';
import { BackgroundWork } from '../services/background-work.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The environment's configuration; on a Redis Cluster QUEUE_PREFIX is a hash tag (`withKeyPrefix` of @smsgw/queue). */
    config: ApiConfig;
    /** node-postgres pool: every statement of the API (it loads no Prisma). */
    sql: Sql;
    /** The listings' pool (paging.ts in @smsgw/db): planned without bitmap or sequential scans. */
    listingSql: ListingSql;
    redis: RedisClient;
    dispatchQueue: DispatchQueue;
    /** On a Redis connection of its own, as `reportsSaved` waits on it. */
    reportsQueue: ReportsQueue;
    /** Resolves once REDIS_WAIT_REPLICAS replicas hold what `reportsQueue` enqueued so far (`ReplicaWait` of @smsgw/queue). */
    reportsSaved: () => Promise<void>;
    webhooksQueue: WebhooksQueue;
    /** Where webhooks may point: WEBHOOK_ALLOW_PRIVATE and the resolver that checks host names. */
    webhookPolicy: TargetPolicy;
    /** Expected, repeating conditions (Postgres or Redis away), logged once per burst with a count. */
    incidents: BurstLog;
    /** What the process goes on with after answering (a send's assignment); closing waits for it. */
    background: BackgroundWork;
  }
}

/**
 * The API's connections: Postgres (a node-postgres pool) and Redis (the queues' producers). Closed in
 * reverse order of opening when the app closes.
 */
export const resources = fp(
  async (app: FastifyInstance, options: { config: ApiConfig; webhookResolver?: TargetPolicy['resolve'] }) => {
    const config = withKeyPrefix(options.config);
    const incidents = new BurstLog(app.log);
    const sql = createSql({ url: config.DATABASE_URL, onIdleError: (error) => incidents.report('idle Postgres connection failed', error) });
    // Its settings are its sessions' (sql.ts), which a transaction pooler would not keep.
    const listingSql = createListingSql({
      url: config.DATABASE_DIRECT_URL ?? config.DATABASE_URL,
      onIdleError: (error) => incidents.report('idle Postgres connection failed', error),
    });
    // Bounded, so that a stalled Redis holds no request for longer than REDIS_COMMAND_TIMEOUT_MS.
    const redis = createProducerConnection(config, { lazyConnect: true, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS });
    // WAIT blocks its connection: the reports have one of their own, so that nothing else waits behind it.
    const reportsRedis = duplicateConnection(redis);
    for (const connection of [redis, reportsRedis]) onRedisError(connection, 'Redis connection failed', (what, error) => incidents.report(what, error));
    await Promise.all([redis.connect(), reportsRedis.connect()]);
    const dispatchQueue = createDispatchQueue(redis, config.QUEUE_PREFIX);
    const reportsQueue = createReportsQueue(reportsRedis, config.QUEUE_PREFIX);
    const webhooksQueue = createWebhooksQueue(redis, config.QUEUE_PREFIX);
    // Without a listener BullMQ writes a queue's connection errors to stderr, a stack each.
    for (const queue of [dispatchQueue, reportsQueue, webhooksQueue]) queue.on('error', (error) => incidents.report('Redis connection failed', error));
    const replicas = new ReplicaWait({
      redis: reportsRedis,
      prefix: config.QUEUE_PREFIX,
      replicas: replicasToWait(config),
      timeoutMs: replicaWaitTimeoutMs(config.REDIS_COMMAND_TIMEOUT_MS),
      onShortfall: (acknowledged) =>
        incidents.report(
          'device reports answered with fewer Redis replicas than REDIS_WAIT_REPLICAS: not waiting for replicas for 10 s',
          `${acknowledged} acknowledged in time`,
        ),
    });

    app.decorate('config', config);
    app.decorate('incidents', incidents);
    app.decorate('sql', sql);
    app.decorate('listingSql', listingSql);
    app.decorate<RedisClient>('redis', redis);
    app.decorate('dispatchQueue', dispatchQueue);
    app.decorate('reportsQueue', reportsQueue);
    app.decorate('reportsSaved', () => replicas.afterWrite());
    app.decorate('webhooksQueue', webhooksQueue);
    app.decorate('webhookPolicy', { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, ...(options.webhookResolver && { resolve: options.webhookResolver }) });

    const registration = await registerProcessSettings(redis, { prefix: config.QUEUE_PREFIX, service: 'api', settings: sharedSettings(config) });
    for (const disagreement of registration.disagreements) app.log.error(describeDisagreement(disagreement));

    // Sends whose assignment goes on after the answer, at most: past it a send waits for its own.
    const background = new BackgroundWork(16);
    app.decorate('background', background);

    app.addHook('onClose', async () => {
      // A send's assignment still running needs its connections.
      await background.settled();
      await registration.close();
      await Promise.all([dispatchQueue.close(), reportsQueue.close(), webhooksQueue.close()]);
      redis.disconnect();
      reportsRedis.disconnect();
      await Promise.all([sql.end(), listingSql.end()]);
      incidents.close();
    });
  },
  { name: 'resources' },
);
