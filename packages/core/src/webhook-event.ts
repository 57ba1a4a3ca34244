import { toMessageWebhookPayload, type MessageFields, type MessageRecord } from './message-record.ts';
import { toReceivedRecord, type ReceivedFields, type ReceivedRecord } from './received-record.ts';
import type { DeviceRecord } from './device-record.ts';
import { DEVICE_EVENT_TYPES, RECEIVED_EVENT_TYPE, TEST_EVENT_TYPE, type DeviceEventType, type MessageEventType, type WebhookEventType } from './event-types.ts';

/**
 * Webhook events (decisions.md, "Webhooks"): the payload every delivery carries and the retry
 * schedule; their types are in event-types.ts.
 */
export interface TestEventData {
  webhook_id: string;
  message: string;
}

export interface WebhookPayload {
  type: WebhookEventType;
  timestamp: string;
  data: MessageRecord | ReceivedRecord | TestEventData | DeviceRecord;
}

/** The body of one delivery; the same bytes on every attempt, as it is rebuilt from stored fields only. */
export function webhookBody(type: MessageEventType, occurredAt: Date, message: MessageFields): string;
export function webhookBody(type: typeof RECEIVED_EVENT_TYPE, occurredAt: Date, received: ReceivedFields): string;
export function webhookBody(type: typeof TEST_EVENT_TYPE, occurredAt: Date, data: TestEventData): string;
/** A device event carries the record as it was announced. */
export function webhookBody(type: DeviceEventType, occurredAt: Date, device: DeviceRecord): string;
export function webhookBody(type: WebhookEventType, occurredAt: Date, data: MessageFields | ReceivedFields | TestEventData | DeviceRecord): string {
  const timestamp = occurredAt.toISOString();
  if (type === TEST_EVENT_TYPE) return JSON.stringify({ type, timestamp, data: data as TestEventData } satisfies WebhookPayload);
  if (isDeviceEventType(type)) return JSON.stringify({ type, timestamp, data: data as DeviceRecord } satisfies WebhookPayload);
  if (type === RECEIVED_EVENT_TYPE) return JSON.stringify({ type, timestamp, data: toReceivedRecord(data as ReceivedFields) } satisfies WebhookPayload);
  return JSON.stringify(toMessageWebhookPayload(type, occurredAt, data as MessageFields));
}

export function isDeviceEventType(type: string): type is DeviceEventType {
  return (DEVICE_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * How long to wait after `attempts` failed attempts, from the schedule of delays in seconds
 * (WEBHOOK_RETRY_DELAYS), with a jitter of up to a fifth either way so that an endpoint coming back
 * is not hit by every retry at once; undefined when the schedule is spent.
 */
export function nextAttemptDelayMs(attempts: number, delaysSeconds: readonly number[], random: () => number = Math.random): number | undefined {
  const base = delaysSeconds[attempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}
