import { toMessageWebhookPayload, type MessageFields, type MessageRecord } from './message-record.ts';
import { toReceivedRecord, type ReceivedFields, type ReceivedRecord } from './received-record.ts';
import type { DeviceRecord } from './device-record.ts';

/**
 * Webhook events (decisions.md, "Webhooks"): the types a user may subscribe to, the test event,
 * the payload every delivery carries and the retry schedule.
 */
export const MESSAGE_EVENT_TYPES = ['message.sent', 'message.delivered', 'message.failed', 'message.cancelled'] as const;
export type MessageEventType = (typeof MESSAGE_EVENT_TYPES)[number];
/** An SMS a device received (real-devices.md §4); its data is the received record. */
export const RECEIVED_EVENT_TYPE = 'message.received';
export const TEST_EVENT_TYPE = 'webhook.test';
/** A device's announced health changed (docs/devices.md, "Alerts"); its data is the device record. */
export const DEVICE_EVENT_TYPES = ['device.offline', 'device.online', 'device.degraded'] as const;
export type DeviceEventType = (typeof DEVICE_EVENT_TYPES)[number];
/**
 * A device reported its health (heartbeat, SMS Gate `system:ping`), at most once per ping interval
 * and endpoint: only SMS Gate-format endpoints take it (their `system:ping`), not smsgw's own API.
 */
export const PING_EVENT_TYPE = 'device.ping';
/** The event types an endpoint may subscribe to. */
export const SUBSCRIBABLE_EVENT_TYPES = [...MESSAGE_EVENT_TYPES, RECEIVED_EVENT_TYPE, ...DEVICE_EVENT_TYPES] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export type WebhookEventType = SubscribableEventType | typeof TEST_EVENT_TYPE;
/** Every type of event the engine delivers, to endpoints of any format. */
export type EngineEventType = WebhookEventType | typeof PING_EVENT_TYPE;

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
