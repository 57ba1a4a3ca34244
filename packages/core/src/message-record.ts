import { Type, type Static } from 'typebox';
import type { SendAttempt } from './failover.ts';
import type { Encoding } from './segments.ts';
import { MESSAGE_STATES, MESSAGE_STATUSES, statusOf, type MessageState } from './status.ts';

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
    sim_number: Type.Union([Type.Integer({ minimum: 1, maximum: 3 }), Type.Null()], { description: 'The SIM slot the device sends from (1-3); null: the device’s default.' }),
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

/** The closed attempts, then the current device's while it has had the message in hand (offered). */
function attemptsOf(m: MessageFields): SendAttempt[] {
  const closed = [...(m.attempts ?? [])];
  if (m.deviceId === null || !m.offeredAt) return closed;
  const failed = m.state === 'failed';
  const at = (failed ? m.failedAt : m.sentAt) ?? m.offeredAt;
  return [...closed, { device_id: m.deviceId, error: failed ? m.error : null, at: at.toISOString() }];
}

export function toMessageRecord(m: MessageFields): MessageRecord {
  return {
    id: m.id,
    status: statusOf(m.state),
    state: m.state,
    to: m.to,
    message: m.body,
    device_id: m.deviceId ?? m.requestedDeviceId ?? null,
    batch_id: m.batchId,
    segments: m.segments,
    encoding: m.encoding,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
    sent_at: m.sentAt?.toISOString() ?? null,
    delivered_at: m.deliveredAt?.toISOString() ?? null,
    error: m.error,
    send_at: m.sendAt?.toISOString() ?? null,
    valid_until: m.validUntil?.toISOString() ?? null,
    sim_number: m.simNumber ?? null,
    attempts: attemptsOf(m),
  };
}
