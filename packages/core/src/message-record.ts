import { Type, type Static } from 'typebox';
import type { SendAttempt } from './failover.ts';
import type { Encoding } from './segments.ts';
import { MESSAGE_STATES, MESSAGE_STATUSES, statusOf, type MessageState } from './status.ts';
import type { MessageEventType } from './event-types.ts';

/**
 * Every outward shape of a message, from one place: the row as Postgres stores it (a query's
 * columns, or `to_jsonb` of the row in a webhook delivery) becomes `MessageFields`, and those
 * become the public record (GET /api/v1/sms/:id, each row of GET /api/v1/sms, a cancel's answer),
 * the webhook payload (smsgw's format) and the live `message.status` event (GET /api/v1/events).
 * The fields the shapes share are computed once (`sharedFields`), so they cannot disagree; the
 * peers' formats (callbacks/, webhook-formats/) render from the same `MessageFields`.
 */

/** The public message record (spec 2.4 and decisions.md), used by the API and by webhook payloads. */
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const MessageRecordSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Enum([...MESSAGE_STATUSES], { description: 'queued, sending, sent, delivered, failed or cancelled.' }),
    state: Type.Enum([...MESSAGE_STATES], { description: 'Lifecycle state: pending, assigned, sending, sent, delivered, failed or cancelled.' }),
    to: Type.String({ description: 'Recipient, E.164.' }),
    message: Type.String(),
    device_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'Device that handles the message: the one named at send from the start, else null until one is assigned.',
    }),
    batch_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    segments: Type.Integer({ minimum: 1 }),
    encoding: Type.Enum(['GSM-7', 'UCS-2']),
    created_at: Timestamp,
    updated_at: Timestamp,
    sent_at: NullableTimestamp,
    delivered_at: NullableTimestamp,
    error: Type.Union([Type.String(), Type.Null()]),
    send_at: Type.Union([Timestamp, Type.Null()], { description: 'Scheduled: no device gets the message before this moment; null: at once.' }),
    valid_until: Type.Union([Timestamp, Type.Null()], { description: 'Not handed to a device by then, the message fails; null: the service’s time to live.' }),
    sim_number: Type.Union([Type.Integer({ minimum: 1, maximum: 3 }), Type.Null()], {
      description: 'The SIM slot the device sends from (1-3); null: the device’s default.',
    }),
    attempts: Type.Array(
      Type.Object(
        {
          device_id: Type.String({ format: 'uuid' }),
          error: Type.Union([Type.String(), Type.Null()], { description: 'Why this device did not send it; null: it sent it, or still has it.' }),
          at: Timestamp,
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Each device that had the message in hand, in order: those that failed it before it left them (it then went to another device), and the one that has it now or had it last. Empty until a device takes it.',
      },
    ),
  },
  { additionalProperties: false },
);
export type MessageRecord = Static<typeof MessageRecordSchema>;

export interface MessageFields {
  id: string;
  batchId: string | null;
  deviceId: string | null;
  /** The device named at send, shown as `device_id` until the dispatcher assigns it (absent: none named). */
  requestedDeviceId?: string | null;
  to: string;
  body: string;
  segments: number;
  encoding: Encoding;
  state: MessageState;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
  deliveredAt: Date | null;
  /** Absent: not stored with the caller's row (none scheduled, no validity, the default SIM). */
  sendAt?: Date | null;
  validUntil?: Date | null;
  simNumber?: number | null;
  /** Failover: the earlier devices' closed attempts (absent: none). */
  attempts?: readonly SendAttempt[];
  /** When the current device was first offered the message, and when it failed (absent: never). */
  offeredAt?: Date | null;
  failedAt?: Date | null;
}

/** The device a message shows: the one it is assigned to, else the one named at send. */
export function shownDeviceId(m: Pick<MessageFields, 'deviceId' | 'requestedDeviceId'>): string | null {
  return m.deviceId ?? m.requestedDeviceId ?? null;
}

/** The closed attempts, then the current device's while it has had the message in hand (offered). */
function attemptsOf(m: MessageFields): SendAttempt[] {
  const closed = [...(m.attempts ?? [])];
  if (m.deviceId === null || !m.offeredAt) return closed;
  const failed = m.state === 'failed';
  const at = (failed ? m.failedAt : m.sentAt) ?? m.offeredAt;
  return [...closed, { device_id: m.deviceId, error: failed ? m.error : null, at: at.toISOString() }];
}

/** What the live event needs of a message (it carries no text, so its read selects none). */
export type StatusFields = Pick<
  MessageFields,
  'id' | 'batchId' | 'deviceId' | 'requestedDeviceId' | 'state' | 'error' | 'createdAt' | 'updatedAt' | 'sentAt' | 'deliveredAt' | 'failedAt'
>;

const iso = (date: Date | null | undefined) => date?.toISOString() ?? null;

/** The fields the record, the webhook payload and the live event share, computed once for all of them. */
function sharedFields(m: StatusFields) {
  return {
    id: m.id,
    status: statusOf(m.state),
    state: m.state,
    batch_id: m.batchId,
    device_id: shownDeviceId(m),
    error: m.error,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
    sent_at: iso(m.sentAt),
    delivered_at: iso(m.deliveredAt),
  };
}

/** The public record; each row of a list is this record too. Keys in the order of the schema (the webhook body is their JSON). */
export function toMessageRecord(m: MessageFields): MessageRecord {
  const s = sharedFields(m);
  return {
    id: s.id,
    status: s.status,
    state: s.state,
    to: m.to,
    message: m.body,
    device_id: s.device_id,
    batch_id: s.batch_id,
    segments: m.segments,
    encoding: m.encoding,
    created_at: s.created_at,
    updated_at: s.updated_at,
    sent_at: s.sent_at,
    delivered_at: s.delivered_at,
    error: s.error,
    send_at: iso(m.sendAt),
    valid_until: iso(m.validUntil),
    sim_number: m.simNumber ?? null,
    attempts: attemptsOf(m),
  };
}

/** The payload of a message's webhook event in smsgw's format: the record as the transition left it. */
export interface MessageWebhookPayload {
  type: MessageEventType;
  timestamp: string;
  data: MessageRecord;
}

export function toMessageWebhookPayload(type: MessageEventType, occurredAt: Date, m: MessageFields): MessageWebhookPayload {
  return { type, timestamp: occurredAt.toISOString(), data: toMessageRecord(m) };
}

const EventTimestamp = Type.String({ format: 'date-time' });
const NullableEventTimestamp = Type.Union([EventTimestamp, Type.Null()]);

/** `message.status`: a message moved to `state` (its public `status`); the other fields as the row is now. */
export const MessageStatusEventSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Enum([...MESSAGE_STATUSES]),
    state: Type.Enum([...MESSAGE_STATES]),
    batch_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    device_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: EventTimestamp,
    updated_at: EventTimestamp,
    sent_at: NullableEventTimestamp,
    delivered_at: NullableEventTimestamp,
    failed_at: NullableEventTimestamp,
  },
  { additionalProperties: false, description: 'The data of a `message.status` event.' },
);
/** The data of a live `message.status` event. A type, not an interface: it is a record of strings (a user event's data). */
export type StatusEventData = Static<typeof MessageStatusEventSchema>;

export function toStatusEvent(m: StatusFields): StatusEventData {
  const s = sharedFields(m);
  return { ...s, failed_at: iso(m.failedAt) };
}

/**
 * A message row as Postgres gives it, by column name: from a query (dates as Date) or from
 * `to_jsonb` of the row stored in a webhook delivery (dates as ISO strings). A column an older
 * snapshot lacks reads as null (no attempts).
 */
export interface StatusColumns {
  id: string;
  batch_id?: string | null;
  device_id?: string | null;
  requested_device_id?: string | null;
  state: MessageState;
  error?: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  sent_at?: Date | string | null;
  delivered_at?: Date | string | null;
  failed_at?: Date | string | null;
}

export interface MessageColumns extends StatusColumns {
  to_number: string;
  body: string;
  segments: number;
  encoding: Encoding;
  send_at?: Date | string | null;
  valid_until?: Date | string | null;
  sim_number?: number | null;
  attempts?: readonly SendAttempt[] | null;
  offered_at?: Date | string | null;
}

const dateOf = (value: Date | string | null | undefined) => (value === null || value === undefined ? null : new Date(value));

/** What the live event needs of a row (its read selects no text). */
export function statusFromRow(row: StatusColumns): StatusFields {
  return {
    id: row.id,
    batchId: row.batch_id ?? null,
    deviceId: row.device_id ?? null,
    requestedDeviceId: row.requested_device_id ?? null,
    state: row.state,
    error: row.error ?? null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    sentAt: dateOf(row.sent_at),
    deliveredAt: dateOf(row.delivered_at),
    failedAt: dateOf(row.failed_at),
  };
}

/** The message of a row, for its record. */
export function messageFromRow(row: MessageColumns): MessageFields {
  return {
    ...statusFromRow(row),
    to: row.to_number,
    body: row.body,
    segments: row.segments,
    encoding: row.encoding,
    sendAt: dateOf(row.send_at),
    validUntil: dateOf(row.valid_until),
    simNumber: row.sim_number ?? null,
    attempts: row.attempts ?? [],
    offeredAt: dateOf(row.offered_at),
  };
}
