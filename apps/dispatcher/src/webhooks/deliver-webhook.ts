import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import {
  CALLBACK_RENDERERS,
  callbackEventOf,
  isDeviceEventType,
  nextAttemptDelayMs,
  smsGateWebhookBody,
  smsGateWebhookHeaders,
  webhookBody,
  webhookHeaders,
  PING_EVENT_TYPE,
  RECEIVED_EVENT_TYPE,
  TEST_EVENT_TYPE,
  type DeviceRecord,
  type MessageEventType,
  type PingReadings,
  type TestEventData,
  type TargetPolicy,
} from '@smsgw/core';
import {
  abandonDelivery,
  disableWebhook,
  loadDeliveryAttempt,
  messageFromSnapshot,
  receivedFromSnapshot,
  recordDeliveryAttempt,
  type DeliveryAttempt,
  type DeliveryRef,
  type SendDeps,
  type SmsGateTarget,
  type Sql,
} from '@smsgw/db/sql';
import type { EndpointSlots } from './endpoint-slots.ts';
import { sendWebhookRequest, type PostResult } from './post-webhook.ts';
import { actOnTwilioAnswer, isTwilioIncoming, twilioIncomingRequest, TWILIO_ANSWER_BYTES } from './twilio-incoming.ts';

export interface DeliverDeps {
  sql: Sql;
  slots: EndpointSlots;
  policy: TargetPolicy;
  config: DispatcherConfig;
  retryDelays: number[];
  log: Logger;
  /** Adds delivery jobs, to run at once or at `at` (epoch ms). */
  enqueue: (deliveries: DeliveryRef[], at?: number) => Promise<void>;
  /** True once the dispatcher is shutting down: a job in hand stops taking parked deliveries. */
  stopping: () => boolean;
  /** Records that a delivery is parked (`parkDeliveries`, in batches). */
  park: (deliveryId: string) => Promise<void>;
  /** smsgw's one send function, for the replies of a Twilio TwiML answer. */
  send: SendDeps;
  /** Hears what each try of a delivery came to (the metrics). */
  tried: (outcome: TryOutcome) => void;
}

/** What one attempt did: `retry_at` asks for another attempt at that time (epoch ms). */
type AttemptOutcome = { outcome: 'succeeded' | 'failed' | 'disabled' | 'skipped' } | { outcome: 'retry_at'; at: number };

/** What a try came to: `retry` failed and is tried again later, `failed` failed for good, `skipped` found nothing to send. */
export const TRY_OUTCOMES = ['succeeded', 'retry', 'failed', 'disabled', 'skipped'] as const;
export type TryOutcome = (typeof TRY_OUTCOMES)[number];

/**
 * What one delivery job did: parked behind a busy endpoint, or delivered its own delivery and
 * then `drained` parked ones; `retryAt` is when its own delivery is to be tried again, if it is.
 */
export type DeliverResult = { outcome: 'parked' } | { outcome: 'attempted'; drained: number; retryAt: number | undefined };

export interface DeliverJob {
  deliveryId: string;
  webhookId: string;
  /** Identifies this run's endpoint slot. */
  slotToken: string;
}

function bodyOf(delivery: DeliveryAttempt): string {
  if (delivery.type === TEST_EVENT_TYPE) return webhookBody(TEST_EVENT_TYPE, delivery.occurredAt, delivery.data as unknown as TestEventData);
  if (delivery.type === RECEIVED_EVENT_TYPE) return webhookBody(RECEIVED_EVENT_TYPE, delivery.occurredAt, receivedFromSnapshot(delivery.data));
  if (isDeviceEventType(delivery.type)) return webhookBody(delivery.type, delivery.occurredAt, delivery.data as unknown as DeviceRecord);
  // The rest are message events: a ping is only written to SMS Gate-format endpoints.
  return webhookBody(delivery.type as MessageEventType, delivery.occurredAt, messageFromSnapshot(delivery.data));
}

/**
 * Runs a delivery job (decisions.md, "Webhooks"). The endpoint's slot is taken first: if every
 * slot is taken, the delivery is parked (Redis only, and one update so the outbox leaves it
 * alone) and the job ends. Otherwise the job attempts its delivery, then the endpoint's parked
 * deliveries one after another while it holds the slot, so that a backlog behind a slow endpoint
 * waits without polling and never takes more than the endpoint's slots.
 */
export async function deliverWebhook(deps: DeliverDeps, job: DeliverJob): Promise<DeliverResult> {
  const { slots } = deps;
  const { deliveryId, webhookId, slotToken } = job;
  if (!(await slots.acquire(webhookId, slotToken, deliveryId))) {
    await deps.park(deliveryId);
    return { outcome: 'parked' };
  }
  let holding = true;
  try {
    const own = await attempt(deps, deliveryId);
    let drained = 0;
    for (;;) {
      const stopping = deps.stopping();
      const next = await slots.next(webhookId, slotToken, stopping);
      holding = stopping ? false : next !== undefined;
      if (next === undefined) break;
      if (stopping) {
        // The next job takes over the endpoint's queue.
        await deps.enqueue([{ id: next, webhookId }]);
        break;
      }
      const result = await attempt(deps, next);
      drained++;
      if (result.outcome === 'retry_at') await deps.enqueue([{ id: next, webhookId }], result.at);
    }
    return { outcome: 'attempted', drained, retryAt: own.outcome === 'retry_at' ? own.at : undefined };
  } finally {
    if (holding) {
      // An error: give the slot back, and hand the next parked delivery to a job of its own.
      const next = await slots.next(webhookId, slotToken, true).catch(() => undefined);
      if (next !== undefined) await deps.enqueue([{ id: next, webhookId }]).catch(() => undefined);
    }
  }
}

/**
 * The request of a delivery: the signed JSON POST of a webhook endpoint, or what the callback's
 * renderer makes of the event (null: a callback event the renderer cannot state, which is not sent).
 */
function requestOf(delivery: DeliveryAttempt): { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body: string | null } | null {
  const { callback, loaded } = delivery;
  if (callback) {
    const message = messageFromSnapshot(delivery.data);
    const event = callbackEventOf(delivery.type, message);
    if (!event) return null;
    return CALLBACK_RENDERERS[callback.format](callback, { event, message, occurredAt: delivery.occurredAt }, loaded);
  }
  if (delivery.smsGate) return smsGateRequest(delivery, delivery.smsGate);
  const body = bodyOf(delivery);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'smsgw-webhooks',
    ...webhookHeaders(delivery.secrets, delivery.id, Math.floor(Date.now() / 1000), body),
  };
  return { method: 'POST', url: delivery.url, headers, body };
}

/** A delivery to an SMS Gate-format endpoint: SMS Gate's envelope, signed with the account's key as it is now. */
function smsGateRequest(delivery: DeliveryAttempt, target: SmsGateTarget) {
  const common = { id: delivery.id, webhookId: target.clientId, occurredAt: delivery.occurredAt };
  const body = smsGateWebhookBody(
    delivery.type === RECEIVED_EVENT_TYPE
      ? { ...common, type: delivery.type, received: receivedFromSnapshot(delivery.data) }
      : delivery.type === PING_EVENT_TYPE
        ? { ...common, type: delivery.type, ping: delivery.data as unknown as PingReadings }
        : { ...common, type: delivery.type, message: messageFromSnapshot(delivery.data), messageId: target.messageId ?? String(delivery.data.id) },
  );
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'smsgw-webhooks',
    ...smsGateWebhookHeaders(target.signingKey, body, Math.floor(Date.now() / 1000)),
  };
  return { method: 'POST' as const, url: delivery.url, headers, body };
}

/** Sends a request to a URL that a renderer filled in: one that no longer parses fails like an unreachable endpoint. */
async function send(deps: DeliverDeps, request: NonNullable<ReturnType<typeof requestOf>>, maxResponseBytes?: number): Promise<PostResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { statusCode: null, error: 'The callback URL is not a valid URL once filled in.', body: '' };
  }
  return sendWebhookRequest(request.method, url, request.headers, request.body, {
    policy: deps.policy,
    connectTimeoutMs: deps.config.WEBHOOK_CONNECT_TIMEOUT_MS,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    ...(maxResponseBytes !== undefined && { maxResponseBytes }),
  });
}

async function attempt(deps: DeliverDeps, deliveryId: string): Promise<AttemptOutcome> {
  const result = await tryDelivery(deps, deliveryId);
  deps.tried(result.outcome === 'retry_at' ? 'retry' : result.outcome);
  return result;
}

/**
 * One attempt of one delivery: 2xx is success, 410 disables the endpoint (a callback's ends
 * there), anything else is retried on the schedule.
 */
async function tryDelivery(deps: DeliverDeps, deliveryId: string): Promise<AttemptOutcome> {
  const { sql } = deps;
  const delivery = await loadDeliveryAttempt(sql, deliveryId, new Date());
  if (delivery?.state !== 'pending') return { outcome: 'skipped' };
  if (!delivery.enabled) {
    await abandonDelivery(sql, delivery.id, 'Not sent: the endpoint is disabled.');
    return { outcome: 'disabled' };
  }

  // A received SMS's Twilio URL: its answer may hold TwiML replies.
  const incoming = isTwilioIncoming(delivery);
  const request = incoming ? await twilioIncomingRequest(sql, delivery) : requestOf(delivery);
  if (!request) {
    await abandonDelivery(sql, delivery.id, 'Not sent: the callback has no report for this event.');
    return { outcome: 'failed' };
  }
  const result = await send(deps, request, incoming ? TWILIO_ANSWER_BYTES : undefined);

  const at = new Date();
  const attempts = delivery.attempts + 1;
  const { statusCode } = result;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    if (incoming) return { outcome: await actOnTwilioAnswer({ sql, send: deps.send }, delivery, { ...result, statusCode }, at) };
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'succeeded', statusCode, error: null, at, nextAttemptAt: null });
    return { outcome: 'succeeded' };
  }
  if (statusCode === 410) {
    // A webhook endpoint is disabled; a callback belongs to one send and just stops.
    if (!delivery.callback) {
      const reason = `The endpoint answered 410 Gone at ${at.toISOString()}; smsgw stopped sending to it. Enable it again once it accepts events.`;
      // The endpoint first: once its delivery shows the 410, no new event is written to it (and a
      // crash in between leaves the delivery to the outbox, which abandons it as disabled).
      await disableWebhook(sql, delivery.webhookId, reason, at);
      deps.log.info({ webhookId: delivery.webhookId }, 'webhook endpoint disabled: 410 Gone');
    }
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'failed', statusCode, error: result.error, at, nextAttemptAt: null });
    return { outcome: delivery.callback ? 'failed' : 'disabled' };
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
