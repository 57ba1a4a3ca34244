import type { Logger } from 'pino';
import { webhookRetryDelays, type DispatcherConfig } from '@smsgw/config';
import { Batcher, type BurstLog, type Resolver } from '@smsgw/core';
import { parkDeliveries, type DeliveryRef, type SendDeps, type Sql } from '@smsgw/db/sql';
import { enqueueDispatch, enqueueWebhookDeliveries, publishUserEvents, type DispatchQueue, type RedisClient, type WebhooksQueue } from '@smsgw/queue';
import type { DispatcherMetrics } from '../metrics.ts';
import { deliverWebhook, type TryOutcome } from '../webhooks/deliver-webhook.ts';
import type { EndpointSlots } from '../webhooks/endpoint-slots.ts';
import { runAgainAt, type Handler } from './job-handler.ts';

export interface WebhookDeliveryDeps {
  /** The webhook deliveries' own pool: a burst of them never makes messages wait for a connection. */
  sql: Sql;
  redis: RedisClient;
  dispatchQueue: DispatchQueue;
  webhooksQueue: WebhooksQueue;
  slots: EndpointSlots;
  config: DispatcherConfig;
  log: Logger;
  incidents: BurstLog;
  /** True once the dispatcher is shutting down. */
  stopping: () => boolean;
  /** Resolves webhook hosts at connect time (default: the system's DNS). */
  resolver?: Resolver;
  metrics: DispatcherMetrics;
}

/**
 * The `webhook.deliver` job (webhooks/deliver-webhook.ts): a delivery whose attempt failed runs again
 * at its next retry time without spending a BullMQ attempt.
 */
export function webhookDeliveryHandler(deps: WebhookDeliveryDeps): Handler<'webhook.deliver'> {
  const { sql, redis, config, webhooksQueue } = deps;
  const prefix = config.QUEUE_PREFIX;
  // Deliveries parked in the same moment are recorded with one statement.
  const parker = new Batcher<{ id: string; parkedAt: Date }, undefined>(async (parked) => {
    await parkDeliveries(sql, parked, new Date(Date.now() + config.WEBHOOK_PARKED_RECHECK_SECONDS * 1000));
    return parked.map(() => undefined);
  }, 1000);
  // What smsgw's one send function needs of this process (the API's is apps/api/src/services/send-deps.ts): the replies of TwiML answers.
  const send: SendDeps = {
    sql,
    config,
    incidents: deps.incidents,
    enqueueDispatch: (ids, at) => enqueueDispatch(deps.dispatchQueue, ids, at),
    enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(webhooksQueue, deliveries),
    publishUserEvents: (events) => publishUserEvents(redis, prefix, events),
  };
  const deliverDeps = {
    send,
    park: (id: string) => parker.add({ id, parkedAt: new Date() }),
    enqueue: (deliveries: DeliveryRef[], at?: number) => enqueueWebhookDeliveries(webhooksQueue, deliveries, at),
    stopping: deps.stopping,
    sql,
    config,
    log: deps.log,
    slots: deps.slots,
    policy: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, ...(deps.resolver && { resolve: deps.resolver }) },
    retryDelays: webhookRetryDelays(config),
    tried: (outcome: TryOutcome) => deps.metrics.webhookAttempts.inc({ outcome }),
  };

  return async ({ deliveryId, webhookId }, job, token) => {
    const result = await deliverWebhook(deliverDeps, { deliveryId, webhookId, slotToken: `${job.id}:${token}` });
    if (result.outcome === 'attempted' && result.retryAt !== undefined) return runAgainAt(job, token, result.retryAt);
    return result.outcome;
  };
}
