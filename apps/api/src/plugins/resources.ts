import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { sharedSettings, type ApiConfig } from '@smsgw/config';
import { createListingSql, createSql, type ListingSql, type Sql } from '@smsgw/db';
import { BurstLog, type TargetPolicy } from '@smsgw/core';
import {
  createDispatchQueue,
  createProducerConnection,
  createReportsQueue,
  createWebhooksQueue,
  describeDisagreement,
  registerProcessSettings,
  type DispatchQueue,
  type ReportsQueue,
  type WebhooksQueue,
} from '@smsgw/queue';
import { BackgroundWork } from '../services/background-work.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: ApiConfig;
    /** node-postgres pool: every statement of the API (it loads no Prisma). */
    sql: Sql;
    /** The listings' pool (paging.ts in @smsgw/db): planned without bitmap or sequential scans. */
    listingSql: ListingSql;
    redis: Redis;
    dispatchQueue: DispatchQueue;
    reportsQueue: ReportsQueue;
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
 * The API's connections: Postgres (a node-postgres pool) and Redis (the dispatch queue producer). Closed in
 * reverse order of opening when the app closes.
 */
export const resources = fp(
  async (app: FastifyInstance, options: { config: ApiConfig; webhookResolver?: TargetPolicy['resolve'] }) => {
    const { config } = options;
    const incidents = new BurstLog(app.log);
    const sql = createSql({ url: config.DATABASE_URL, onIdleError: (error) => incidents.report('idle Postgres connection failed', error) });
    // Its settings are its sessions' (sql.ts), which a transaction pooler would not keep.
    const listingSql = createListingSql({
      url: config.DATABASE_DIRECT_URL ?? config.DATABASE_URL,
      onIdleError: (error) => incidents.report('idle Postgres connection failed', error),
    });
    // Bounded, so that a stalled Redis holds no request for longer than REDIS_COMMAND_TIMEOUT_MS.
    const redis = createProducerConnection(config.REDIS_URL, { lazyConnect: true, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS });
    redis.on('error', (error: Error) => incidents.report('Redis connection failed', error));
    await redis.connect();
    const dispatchQueue = createDispatchQueue(redis, config.QUEUE_PREFIX);
    const reportsQueue = createReportsQueue(redis, config.QUEUE_PREFIX);
    const webhooksQueue = createWebhooksQueue(redis, config.QUEUE_PREFIX);
    // Without a listener BullMQ writes a queue's connection errors to stderr, a stack each.
    for (const queue of [dispatchQueue, reportsQueue, webhooksQueue]) queue.on('error', (error) => incidents.report('Redis connection failed', error));

    app.decorate('config', config);
    app.decorate('incidents', incidents);
    app.decorate('sql', sql);
    app.decorate('listingSql', listingSql);
    app.decorate('redis', redis);
    app.decorate('dispatchQueue', dispatchQueue);
    app.decorate('reportsQueue', reportsQueue);
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
      await Promise.all([sql.end(), listingSql.end()]);
      incidents.close();
    });
  },
  { name: 'resources' },
);
