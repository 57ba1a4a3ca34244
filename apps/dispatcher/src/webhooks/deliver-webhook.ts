import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import { nextAttemptDelayMs, webhookBody, webhookHeaders, TEST_EVENT_TYPE, type TestEventData, type TargetPolicy } from '@smsgw/core';
import {
  abandonDelivery, disableWebhook, loadDeliveryAttempt, messageFromSnapshot, recordDeliveryAttempt, type DeliveryAttempt, type Sql,
} from '@smsgw/db/sql';
import type { EndpointSlots } from './endpoint-slots.ts';
import { postWebhook } from './post-webhook.ts';

export interface DeliverDeps {
  sql: Sql;
  slots: EndpointSlots;
  policy: TargetPolicy;
  config: DispatcherConfig;
  retryDelays: number[];
  log: Logger;
}

/**
 * What one run of a delivery job did: `retry_at` and `busy_until` ask the caller to run the job
 * again at that time (the attempt failed, or the endpoint has all its slots taken).
 */
export type DeliverOutcome =
  | { outcome: 'succeeded' | 'failed' | 'disabled' | 'skipped' }
  | { outcome: 'retry_at' | 'busy_until'; at: number };

/**
 * When a delivery finds its endpoint's slots all taken, it looks again after a quarter of the time
 * it has waited so far (within these bounds, with jitter): quickly behind a short burst, rarely
 * behind a long backlog, so that a backlog of thousands does not keep the queue busy polling.
 */
const BUSY_DELAY_MIN_MS = 250;
const BUSY_DELAY_MAX_MS = 30_000;

function busyDelay(waitedMs: number): number {
  return Math.min(BUSY_DELAY_MAX_MS, Math.max(BUSY_DELAY_MIN_MS, waitedMs / 4)) * (1 + Math.random());
}

function bodyOf(delivery: DeliveryAttempt): string {
  return delivery.type === TEST_EVENT_TYPE
    ? webhookBody(TEST_EVENT_TYPE, delivery.occurredAt, delivery.data as unknown as TestEventData)
    : webhookBody(delivery.type, delivery.occurredAt, messageFromSnapshot(delivery.data));
}

/**
 * One attempt of one delivery (decisions.md, "Webhooks"): signed as Standard Webhooks with the
 * delivery id as `webhook-id`, 2xx is success, 410 disables the endpoint, anything else is tried
 * again on the retry schedule until it is spent. `slotToken` identifies this run's endpoint slot.
 */
export async function deliverWebhook(deps: DeliverDeps, deliveryId: string, slotToken: string): Promise<DeliverOutcome> {
  const { sql, config } = deps;
  const delivery = await loadDeliveryAttempt(sql, deliveryId, new Date());
  if (!delivery || delivery.state !== 'pending') return { outcome: 'skipped' };
  if (!delivery.enabled) {
    await abandonDelivery(sql, delivery.id, 'Not sent: the endpoint is disabled.');
    return { outcome: 'disabled' };
  }
  if (!(await deps.slots.acquire(delivery.webhookId, slotToken))) {
    return { outcome: 'busy_until', at: Date.now() + busyDelay(Date.now() - delivery.occurredAt.getTime()) };
  }

  let result;
  try {
    const body = bodyOf(delivery);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'smsgw-webhooks',
      ...webhookHeaders(delivery.secrets, delivery.id, Math.floor(Date.now() / 1000), body),
    };
    result = await postWebhook(new URL(delivery.url), headers, body, {
      policy: deps.policy,
      connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    });
  } finally {
    await deps.slots.release(delivery.webhookId, slotToken);
  }

  const at = new Date();
  const attempts = delivery.attempts + 1;
  const { statusCode } = result;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'succeeded', statusCode, error: null, at, nextAttemptAt: null });
    return { outcome: 'succeeded' };
  }
  if (statusCode === 410) {
    const reason = `The endpoint answered 410 Gone at ${at.toISOString()}; smsgw stopped sending to it. Enable it again once it accepts events.`;
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'failed', statusCode, error: result.error, at, nextAttemptAt: null });
    await disableWebhook(sql, delivery.webhookId, reason, at);
    deps.log.info({ webhookId: delivery.webhookId }, 'webhook endpoint disabled: 410 Gone');
    return { outcome: 'disabled' };
  }
  const delay = nextAttemptDelayMs(attempts, deps.retryDelays);
  if (delay === undefined) {
    const error = `${result.error} Gave up after ${attempts} attempts.`;
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'failed', statusCode, error, at, nextAttemptAt: null });
    return { outcome: 'failed' };
  }
  const nextAttemptAt = new Date(at.getTime() + delay);
  await recordDeliveryAttempt(sql, delivery.id, { outcome: 'retry', statusCode, error: result.error, at, nextAttemptAt });
  return { outcome: 'retry_at', at: nextAttemptAt.getTime() };
}
