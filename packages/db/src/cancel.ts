import { cancellingSql, inHandSql, neverHandedSql, type DeviceProtocol, type MessageState } from '@smsgw/core';
import type { Sql } from './sql.ts';
import { TRANSITIONED_SELECT, toTransitioned, webhookEventsCte, type Transitioned } from './webhook-deliveries.ts';

/**
 * Cancelling messages (decisions.md, "Cancel"): every change is a compare-and-set, so a cancel that
 * races an assignment, an offer or a report either wins or changes nothing.
 */
export interface CancelTarget {
  id: string;
  state: MessageState;
  /** Its first offer to its device (null: never offered), for @smsgw/core's sub-states. */
  offeredAt: Date | null;
  cancelRequested: boolean;
  deviceId: string | null;
  /** The protocol and app version of the message's device, when it has one. */
  protocol: DeviceProtocol | null;
  appVersion: string | null;
}

/** The user's messages of `ids` or of the batch, with what deciding their cancel needs. */
export async function loadCancelTargets(sql: Sql, options: { userId: string; ids?: string[]; batchId?: string }): Promise<CancelTarget[]> {
  const { rows } = await sql.query<{
    id: string;
    state: MessageState;
    offered_at: Date | null;
    cancel_requested: boolean;
    device_id: string | null;
    protocol: CancelTarget['protocol'];
    app_version: string | null;
  }>(
    `SELECT m.id, m.state, m.offered_at, m.cancel_requested_at IS NOT NULL AS cancel_requested, m.device_id,
            d.protocol, d.app_version
     FROM messages m LEFT JOIN devices d ON d.id = m.device_id
     WHERE m.user_id = $1 AND (m.id = ANY($2::uuid[]) OR m.batch_id = $3::uuid)
     ORDER BY m.created_at, m.id`,
    [options.userId, options.ids ?? [], options.batchId ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    state: r.state,
    offeredAt: r.offered_at,
    cancelRequested: r.cancel_requested,
    deviceId: r.device_id,
    protocol: r.protocol,
    appVersion: r.app_version,
  }));
}

// The statement's WHERE for each kind of cancel: the user's, of messages in no device's hands; the
// phone's answer to a cancel it was asked for (it held the message, acknowledged or not).
const CANCELLABLE = {
  user: `m.user_id = $3::uuid AND ${neverHandedSql('m')}`,
  phone: `m.device_id = $3::uuid AND ${cancellingSql('m')}`,
} as const;

/**
 * Moves messages to `cancelled`, with their history, their `message.cancelled` webhook events and
 * their quota given back (one unit each, to the month it was charged to, never below 0), all in one
 * statement. `by`: the user (`ownerId` is the user) or the phone that held them (`ownerId` is the device).
 */
export async function cancelMessages(
  sql: Sql,
  options: { ids: string[]; by: keyof typeof CANCELLABLE; ownerId: string; now: Date; detail: string },
): Promise<Transitioned> {
  if (options.ids.length === 0) return { moved: [], deliveries: [] };
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null }>(
    `WITH moved AS (
       UPDATE messages m SET state = 'cancelled', cancelled_at = $2, updated_at = $2
       WHERE m.id = ANY($1::uuid[]) AND ${CANCELLABLE[options.by]}
       RETURNING m.id, m.user_id, m.device_id, m.created_at, m.cancelled_at AS at, to_jsonb(m) AS snapshot
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail) SELECT id, 'cancelled', device_id, $2, $4 FROM moved
     ), refund AS (
       UPDATE quota_usage q SET used = greatest(q.used - r.n, 0)
       FROM (SELECT user_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS period, count(*)::int AS n
             FROM moved GROUP BY 1, 2) r
       WHERE q.user_id = r.user_id AND q.period = r.period
     ), ${webhookEventsCte('$5')}
     ${TRANSITIONED_SELECT}`,
    [options.ids, options.now, options.ownerId, options.detail, ['message.cancelled']],
  );
  return toTransitioned(rows);
}

/**
 * Asks for the cancel of messages an SMS Gate phone holds and has not reported sent (offered, or
 * acknowledged): they are offered no more, and the phone's `Cancelled` snapshot will cancel them if
 * it still held them back. Returns those asked now or before, with their devices, to send each
 * phone its `MessageCancelled`.
 */
export async function requestPhoneCancel(sql: Sql, options: { userId: string; ids: string[]; now: Date }): Promise<{ id: string; deviceId: string }[]> {
  if (options.ids.length === 0) return [];
  const { rows } = await sql.query<{ id: string; device_id: string }>(
    `UPDATE messages SET cancel_requested_at = coalesce(cancel_requested_at, $3)
     WHERE id = ANY($1::uuid[]) AND user_id = $2 AND ${inHandSql('messages')}
     RETURNING id, device_id`,
    [options.ids, options.userId, options.now],
  );
  return rows.map((r) => ({ id: r.id, deviceId: r.device_id }));
}

/** The device's messages it was asked to cancel and has not answered yet (told again when its stream opens). */
export async function pendingPhoneCancels(sql: Sql, deviceId: string): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages WHERE device_id = $1 AND ${cancellingSql('messages')}
     ORDER BY cancel_requested_at LIMIT 100`,
    [deviceId],
  );
  return rows.map((r) => r.id);
}
