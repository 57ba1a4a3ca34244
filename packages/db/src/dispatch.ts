import { clampReportedAtSql, neverHandedSql, protocolsWith, statesLeadingTo, type MessageEventType, type MessageState } from '@smsgw/core';
import { beforeQueueDeadline } from './queue-deadline.ts';
import type { Sql } from './sql.ts';
import { stickyFromAssignedCte } from './sticky-senders.ts';
import { TRANSITIONED_SELECT, toTransitioned, webhookEventsCte, type Transitioned } from './webhook-deliveries.ts';

// The dispatcher's statements: assignment, failure, reports. Each is one statement per batch.

/** The error of a message that no device took before its valid_until (or within MAX_QUEUE_SECONDS). */
export const EXPIRED_BEFORE_SENT = 'expired before it could be sent';

// The SIM of an assignment: the caller's own (`sim_number` not picked) stays; otherwise the one the
// dispatcher passes (a carrier budget's pick, else the sticky SIM), or none. A SIM smsgw chose is
// marked picked, so that a later assignment to another device chooses again.
const PICKED_SIM = `sim_number = CASE WHEN m.sim_number IS NOT NULL AND NOT m.sim_picked THEN m.sim_number ELSE input.sim_number END,
         sim_picked = (m.sim_number IS NULL OR m.sim_picked) AND input.sim_number IS NOT NULL`;

/**
 * Assigns messages to devices (pending -> assigned, compare-and-set); returns those it moved. A
 * message not yet due (send_at) or past its queue deadline (its valid_until, else
 * `maxQueueSeconds` from when it was due; none when not given) is never assigned, whichever job
 * runs; nor is an encrypted one to a device whose protocol does not send encrypted messages (it could not read it). `simNumber` (sticky sender) is used when the message names no SIM itself. The same
 * statement remembers the device as the recipient's sticky one (`sticky`, for users who have it on).
 */
export async function assignMessages(
  sql: Sql,
  options: { assignments: { id: string; deviceId: string; simNumber?: number | null }[]; now: Date; maxQueueSeconds?: number },
): Promise<{ id: string; deviceId: string }[]> {
  if (options.assignments.length === 0) return [];
  const { rows } = await sql.query<{ id: string; device_id: string }>(
    `WITH input AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $6::smallint[]) AS t(id, device_id, sim_number)),
     moved AS (
       UPDATE messages m
       SET state = 'assigned', device_id = input.device_id, assigned_at = $3, updated_at = $3, assignments = m.assignments + 1,
         ${PICKED_SIM}
       FROM input WHERE m.id = input.id AND m.state = ANY($4::message_state[])
         AND (m.send_at IS NULL OR m.send_at <= $3) AND ${beforeQueueDeadline('m', '$5', '$3')}
         AND (NOT m.is_encrypted OR EXISTS (SELECT 1 FROM devices d WHERE d.id = input.device_id AND d.protocol = ANY($7::device_protocol[])))
       RETURNING m.id, m.device_id, m.user_id, m.to_number, m.sim_number, m.is_encrypted
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at) SELECT id, 'assigned', device_id, $3 FROM moved
     ), ${stickyFromAssignedCte('$3')}
     SELECT id, device_id FROM moved`,
    [
      options.assignments.map((a) => a.id),
      options.assignments.map((a) => a.deviceId),
      options.now,
      statesLeadingTo('assigned'),
      options.maxQueueSeconds ?? null,
      options.assignments.map((a) => a.simNumber ?? null),
      protocolsWith('encryptedMessages'),
    ],
  );
  return rows.map((r) => ({ id: r.id, deviceId: r.device_id }));
}

/**
 * Fails messages that are in one of `from` (by default every state that may fail), with a reason,
 * and writes their `message.failed` webhook events in the same statement.
 */
export async function failMessages(sql: Sql, options: { ids: string[]; error: string; now: Date; from?: MessageState[] }): Promise<Transitioned> {
  if (options.ids.length === 0) return { moved: [], deliveries: [] };
  const from = (options.from ?? statesLeadingTo('failed')).filter((s) => statesLeadingTo('failed').includes(s));
  const events: MessageEventType[] = ['message.failed'];
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null }>(
    `WITH moved AS (
       UPDATE messages m SET state = 'failed', failed_at = $2, updated_at = $2, error = $3
       WHERE id = ANY($1::uuid[]) AND state = ANY($4::message_state[])
       RETURNING m.id, m.user_id, m.device_id, m.failed_at AS at, to_jsonb(m) AS snapshot
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail) SELECT id, 'failed', device_id, $2, $3 FROM moved
     ), ${webhookEventsCte('$5')}
     ${TRANSITIONED_SELECT}`,
    [options.ids, options.now, options.error, from, events],
  );
  return toTransitioned(rows);
}

export type ReportStatus = 'sending' | 'sent' | 'delivered' | 'failed';

export interface ReportInput {
  id: string;
  /** The device that reported: only its own messages move. */
  deviceId: string;
  at: Date;
  error: string | null;
}

// `at` is the device's clock, clamped (@smsgw/core's `clampReportedAt`).
const AT = clampReportedAtSql('input.at', 'm', '$5');
const ACKNOWLEDGED = `sending_at = coalesce(m.sending_at, ${AT})`;
const REPORT_SETS: Record<ReportStatus, string> = {
  sending: ACKNOWLEDGED,
  sent: `${ACKNOWLEDGED}, sent_at = ${AT}`,
  delivered: `${ACKNOWLEDGED}, sent_at = coalesce(m.sent_at, ${AT}), delivered_at = ${AT}`,
  failed: `${ACKNOWLEDGED}, failed_at = ${AT}, error = coalesce(input.error, 'The device reported that sending failed.')`,
};

/** The webhook events of each report, by default; see `applyReports`'s `events`. */
export const REPORT_EVENTS: Record<ReportStatus, MessageEventType[]> = {
  sending: [],
  sent: ['message.sent'],
  delivered: ['message.delivered'],
  failed: ['message.failed'],
};

/**
 * Applies one kind of report, of one device or many: a compare-and-set from the states that may
 * lead to `status` and that a device has had in hand (offered), only on each device's own messages, with
 * the webhook events of the transition in the same statement. Duplicate and backward reports
 * match no row and write no event. `from` narrows the states moved from, `events` replaces the
 * events written (a `delivered` report of a message never reported `sent` also means it was sent).
 */
export async function applyReports(
  sql: Sql,
  options: { status: ReportStatus; reports: ReportInput[]; now: Date; from?: MessageState[]; events?: MessageEventType[] },
): Promise<Transitioned> {
  if (options.reports.length === 0) return { moved: [], deliveries: [] };
  const { status, now, reports } = options;
  const from = statesLeadingTo(status).filter((s) => s !== 'pending' && (!options.from || options.from.includes(s)));
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null }>(
    `WITH input AS (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $6::uuid[]) AS t(id, at, error, device_id)),
     -- Rows locked in id order, whatever the order of the reports: two batches over the same messages wait, never deadlock.
     locked AS (SELECT m.id FROM messages m WHERE m.id = ANY($1::uuid[]) AND m.state = ANY($7::message_state[]) ORDER BY m.id FOR UPDATE),
     moved AS (
       UPDATE messages m SET state = $4::message_state, updated_at = $5, ${REPORT_SETS[status]}
       FROM input JOIN locked ON locked.id = input.id
       WHERE m.id = input.id AND m.device_id = input.device_id AND m.state = ANY($7::message_state[])
         AND NOT ${neverHandedSql('m')}
       RETURNING m.id, m.user_id, m.device_id, ${AT} AS at, input.error, to_jsonb(m) AS snapshot
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail)
       SELECT id, $4::message_state, device_id, at, error FROM moved
     ), ${webhookEventsCte('$8')}
     ${TRANSITIONED_SELECT}`,
    [
      reports.map((r) => r.id),
      reports.map((r) => r.at),
      reports.map((r) => r.error),
      status,
      now,
      reports.map((r) => r.deviceId),
      from,
      options.events ?? REPORT_EVENTS[status],
    ],
  );
  return toTransitioned(rows);
}
