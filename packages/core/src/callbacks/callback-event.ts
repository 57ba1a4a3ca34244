import type { MessageFields } from '../message-record.ts';

/**
 * Per-send callbacks (Kannel's `dlr-url`, Twilio's `StatusCallback`): a send names a URL, a
 * format and the events it wants; the webhook engine renders each selected event of its messages
 * with the format's renderer and delivers it, with the retries and address rules of any webhook.
 */

/**
 * The events a callback can select. They split smsgw's `message.failed` in two, as both peers do:
 * `undelivered` when a delivery report said the sent message did not arrive, `failed` when it was
 * never sent (Kannel's "non-delivered to phone" and "non-delivered to SMSC", Twilio's
 * `undelivered` and `failed`).
 */
export const CALLBACK_EVENTS = ['sent', 'delivered', 'undelivered', 'failed'] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

/** The callback event of a message webhook event, given the message as the transition left it. */
export function callbackEventOf(type: string, message: Pick<MessageFields, 'sentAt'>): CallbackEvent | null {
  if (type === 'message.sent') return 'sent';
  if (type === 'message.delivered') return 'delivered';
  if (type === 'message.failed') return message.sentAt ? 'undelivered' : 'failed';
  return null;
}

/**
 * The SQL twin of `callbackEventOf`, over a delivery's `type` and the `to_jsonb` snapshot of the
 * message (used where the deliveries are written, so that only the selected events are stored).
 */
export function callbackEventSql(type: string, snapshot: string): string {
  return `CASE ${type} WHEN 'message.sent' THEN 'sent' WHEN 'message.delivered' THEN 'delivered'
            WHEN 'message.failed' THEN CASE WHEN ${snapshot}->>'sent_at' IS NULL THEN 'failed' ELSE 'undelivered' END END`;
}

/** A callback as stored with its send. */
export interface CallbackTarget {
  url: string;
  format: CallbackFormat;
  /** What the renderer needs besides the message, as the compatibility route stored it. */
  context: Record<string, unknown>;
}

/** One selected event of one message, to render. */
export interface CallbackOccurrence {
  event: CallbackEvent;
  message: MessageFields;
  /** When the transition happened. */
  occurredAt: Date;
}

/** The HTTP request a renderer makes of an occurrence: the engine sends it as it is. */
export interface CallbackRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

/**
 * What the engine reads for a renderer each time it sends, rather than storing it with the send:
 * a key rotated after the send signs what is sent after the rotation.
 */
export interface CallbackLoaded {
  /** The key the format signs with (Twilio's: the account's current Auth Token); null for a format that does not sign. */
  signingKey: string | null;
  /** The phone number of the SIM that sends (or sent) the message, when its device reported one. */
  senderNumber: string | null;
}

/** Turns an occurrence into the request the peer's clients expect; the engine only sends. */
export type CallbackRenderer = (target: CallbackTarget, occurrence: CallbackOccurrence, loaded: CallbackLoaded) => CallbackRequest;

export const CALLBACK_FORMATS = ['kannel', 'twilio'] as const;
export type CallbackFormat = (typeof CALLBACK_FORMATS)[number];

export function isCallbackFormat(value: string): value is CallbackFormat {
  return (CALLBACK_FORMATS as readonly string[]).includes(value);
}
