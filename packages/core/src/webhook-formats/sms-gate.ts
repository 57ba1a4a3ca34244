import { createHmac } from 'node:crypto';
import { shownDeviceId, type MessageFields } from '../message-record.ts';
import type { ReceivedFields } from '../received-record.ts';
import { PING_EVENT_TYPE, RECEIVED_EVENT_TYPE, type EngineEventType } from '../event-types.ts';

/**
 * SMS Gate's webhooks (docs/compatibility.md), as the SMS Gate app emits them (capcom6/android-sms-gateway
 * `modules/webhooks`): the envelope `{deviceId, event, id, payload, webhookId}`, the payloads of
 * `SmsEventPayload` (nulls left out, as Gson writes them), and `X-Signature`, the lower-case hex
 * HMAC-SHA256 of the body followed by `X-Timestamp`, keyed by the account's `webhooks.signing_key`.
 * smsgw's engine writes and delivers these events; this only renders them.
 */

/** SMS Gate's events smsgw emits, each with the engine's event type that carries it. */
export const SMS_GATE_EVENTS = {
  'sms:received': RECEIVED_EVENT_TYPE,
  'sms:sent': 'message.sent',
  'sms:delivered': 'message.delivered',
  'sms:failed': 'message.failed',
  'sms:cancelled': 'message.cancelled',
  'system:ping': PING_EVENT_TYPE,
} as const satisfies Record<string, EngineEventType>;
export type SmsGateEvent = keyof typeof SMS_GATE_EVENTS;

export function isSmsGateEvent(value: string): value is SmsGateEvent {
  return Object.hasOwn(SMS_GATE_EVENTS, value);
}

/** The SMS Gate event an engine event type is delivered as (undefined: none). */
export function smsGateEventOf(type: string): SmsGateEvent | undefined {
  return (Object.keys(SMS_GATE_EVENTS) as SmsGateEvent[]).find((event) => SMS_GATE_EVENTS[event] === type);
}

/** What a device told of itself when it pinged, as the ping delivery stores it. */
export interface PingReadings {
  device_id: string;
  battery_level: number | null;
  battery_charging: boolean | null;
  app_version: string | null;
}

/** One delivery to render: the engine's event and what it carries. */
export type SmsGateOccurrence = {
  /** The delivery's id (the envelope's `id`, stable across attempts) and the endpoint's client id. */
  id: string;
  webhookId: string;
  occurredAt: Date;
} & (
  | { type: typeof RECEIVED_EVENT_TYPE; received: ReceivedFields }
  | { type: typeof PING_EVENT_TYPE; ping: PingReadings }
  /** `messageId`: the SMS Gate id of the message's send (the client's id of its batch, else smsgw's). */
  | { type: string; message: MessageFields; messageId: string }
);

type Check = { description: string; observedUnit: string; observedValue: number; status: 'pass' | 'warn' | 'fail' };

/**
 * The app's `HealthResponse` from what smsgw knows of the device: its battery as the app judges it
 * (below 10 % fail, below 25 % warn), and its connection, which holds since it just reached smsgw.
 */
function health(ping: PingReadings) {
  const checks: Record<string, Check> = {};
  if (ping.battery_level !== null) {
    const level = ping.battery_level;
    checks['battery:level'] = {
      description: 'Battery level in percent',
      observedUnit: 'percent',
      observedValue: level,
      status: level < 10 ? 'fail' : level < 25 ? 'warn' : 'pass',
    };
  }
  if (ping.battery_charging !== null) {
    checks['battery:charging'] = { description: 'Is the phone charging?', observedUnit: 'flags', observedValue: ping.battery_charging ? 1 : 0, status: 'pass' };
  }
  checks['connection:status'] = { description: 'Internet connection status', observedUnit: 'boolean', observedValue: 1, status: 'pass' };
  const statuses = Object.values(checks).map((c) => c.status);
  const status = statuses.includes('fail') ? 'fail' : statuses.includes('warn') ? 'warn' : 'pass';
  return { status, ...(ping.app_version !== null && { version: ping.app_version }), checks };
}

/** The event's `payload` and the device it names. */
function payloadOf(o: SmsGateOccurrence): { deviceId: string; payload: Record<string, unknown> } {
  if ('received' in o) {
    const r = o.received;
    return {
      deviceId: r.deviceId,
      payload: {
        messageId: r.id,
        phoneNumber: r.from,
        sender: r.from,
        ...(r.to !== null && { recipient: r.to }),
        ...(r.simNumber !== null && { simNumber: r.simNumber }),
        message: r.body,
        receivedAt: r.receivedAt.toISOString(),
      },
    };
  }
  if ('ping' in o) return { deviceId: o.ping.device_id, payload: { health: health(o.ping) } };
  const m = o.message;
  const at = (time: Date | null | undefined) => (time ?? o.occurredAt).toISOString();
  const base = { messageId: o.messageId, phoneNumber: m.to, recipient: m.to, ...(m.simNumber != null && { simNumber: m.simNumber }) };
  const extra: Record<string, Record<string, unknown>> = {
    'message.sent': { partsCount: m.segments, sentAt: at(m.sentAt) },
    'message.delivered': { deliveredAt: at(m.deliveredAt) },
    'message.failed': { failedAt: at(m.failedAt), reason: m.error ?? 'Unknown' },
    'message.cancelled': { cancelledAt: at(null) },
  };
  return { deviceId: shownDeviceId(m) ?? '', payload: { ...base, ...extra[o.type] } };
}

/** The body of a delivery: the same bytes on every attempt, as it is rebuilt from stored fields only. */
export function smsGateWebhookBody(o: SmsGateOccurrence): string {
  const event = smsGateEventOf(o.type);
  if (!event) throw new Error(`No SMS Gate event carries ${o.type}`);
  const { deviceId, payload } = payloadOf(o);
  return JSON.stringify({ deviceId, event, id: o.id, payload, webhookId: o.webhookId });
}

/** `X-Signature` of a body sent at `timestamp` (Unix seconds), as the app's `PayloadSingingPlugin` makes it. */
export function signSmsGateWebhook(key: string, body: string, timestamp: number): string {
  return createHmac('sha256', key)
    .update(body + String(timestamp))
    .digest('hex');
}

/**
 * The headers of one attempt. Without a signing key (the account's settings have none) the request
 * goes unsigned, as the app sends it when its key is unset.
 */
export function smsGateWebhookHeaders(key: string | null, body: string, timestamp: number): Record<string, string> {
  if (key === null) return {};
  return { 'x-signature': signSmsGateWebhook(key, body, timestamp), 'x-timestamp': String(timestamp) };
}
