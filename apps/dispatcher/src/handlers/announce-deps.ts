import type { WarnLogger } from '@smsgw/core';
import type { AnnounceDeps, DeliveriesDeps, Sql } from '@smsgw/db/sql';
import { enqueueWebhookDeliveries, publishUserEvents, usersListening, type WebhooksQueue, type RedisClient } from '@smsgw/queue';

/** The dispatcher's resources that announcing a commit uses. */
export interface AnnounceResources {
  sql: Sql;
  redis: RedisClient;
  webhooksQueue: WebhooksQueue;
  config: { QUEUE_PREFIX: string };
  log: WarnLogger;
}

/**
 * What `announceTransitions` needs of the dispatcher (the API's is apps/api/src/services/send-deps.ts):
 * its webhooks queue and Redis, a failure logged at warn. Without Redis, webhook deliveries alone.
 */
export function announceDeps(deps: AnnounceResources): AnnounceDeps;
export function announceDeps(deps: Pick<AnnounceResources, 'webhooksQueue' | 'log'>): DeliveriesDeps;
export function announceDeps(deps: Pick<AnnounceResources, 'webhooksQueue' | 'log'> & Partial<AnnounceResources>): AnnounceDeps | DeliveriesDeps {
  const base: DeliveriesDeps = {
    incidents: { report: (kind, error, context = {}) => deps.log.warn({ ...context, err: error }, kind) },
    enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(deps.webhooksQueue, deliveries),
  };
  const { sql, redis, config } = deps;
  if (sql === undefined || redis === undefined || config === undefined) return base;
  return {
    ...base,
    sql,
    publishUserEvents: (events) => publishUserEvents(redis, config.QUEUE_PREFIX, events),
    usersListening: () => usersListening(redis, config.QUEUE_PREFIX),
  };
}
