import { clampReportedAtSql, inHandSql, unclaimedSql, type AvailabilityWindows } from '@smsgw/core';
import { availableDeviceCondition, windowParams, windowValues } from './availability.ts';
import { releaseToPendingStatement } from './leases.ts';
import type { Sql } from './sql.ts';
import { webhookEventsCte, type DeliveryRef } from './webhook-deliveries.ts';

/**
 * The statements of failover (docs/devices.md, "Failover"): a failure that never left the device
 * sends the message back to round-robin over the user's other devices, or fails it for good with
 * every attempt's error; a device that keeps failing is paused. Each is one statement per batch.
 */

export interface RetryableFailure {
  id: string;
  /** The device that reported: only its own messages move. */
  deviceId: string;
  at: Date;
  error: string | null;
  /** Android's sending limit refused it: the device is paused (`limitPausedUntil`). */
  limitExceeded: boolean;
}

export interface FailedOver {
  /** Back to `pending`, for another device: to enqueue. */
  retried: string[];
  /** Failed for good (attempts used up, a named device, or no other device): `message.failed` written. */
  failed: string[];
  deliveries: DeliveryRef[];
  /** Each reporting device's counters after the statement. */
  devices: { id: string; retryableFailuresInARow: number; quarantines: number; pausedUntil: Date | null }[];
}

const DEFAULT_ERROR = 'The device reported that sending failed before the message left it.';

// `at` is the device's clock, clamped as for any report (@smsgw/core's `clampReportedAt`).
const AT = clampReportedAtSql('input.at', 'm', '$6');
// A retryable failure moves a message in its device's hands (the status machine's moves back to
// `pending`); the same messages move to `failed` when they are not retried.
const IN_HAND = inHandSql('m');
const ISO = (at: string) => `to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const CLOSED = "m.attempts || jsonb_build_array(jsonb_build_object('device_id', m.device_id, 'error', t.error, 'at', t.at_iso))";

/**
 * Applies retryable failures: a compare-and-set from `assigned` (offered) or `sending`, on the
 * reporting device's own messages. The attempt is closed (appended to `attempts`, the offer
 * cleared) and the message goes back to `pending` when it names no device, its user did not ask to
 * cancel it, it has had fewer than `maxAttempts` devices, and its user has an enabled device it was
 * not attempted on; otherwise it
 * fails, its error naming every attempt's. A repeated report matches no row. The devices' retryable
 * failures in a row grow by the messages moved, and a limit-exceeded one is paused until
 * `limitPausedUntil`.
 */
export async function failOver(
  sql: Sql,
  options: { failures: RetryableFailure[]; now: Date; maxAttempts: number; limitPausedUntil: Date },
): Promise<FailedOver> {
  const empty: FailedOver = { retried: [], failed: [], deliveries: [], devices: [] };
  if (options.failures.length === 0) return empty;
  const { failures, now } = options;
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null; n: number | null; q: number | null; until: Date | null }>(
    `WITH input AS (
       SELECT DISTINCT ON (id) * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::uuid[], $5::boolean[]) AS t(id, at, error, device_id, limited)
     ), t AS (
       SELECT m.id, input.limited, coalesce(input.error, '${DEFAULT_ERROR}') AS error, ${AT} AS at, ${ISO(AT)} AS at_iso,
         (m.requested_device_id IS NULL AND m.cancel_requested_at IS NULL AND jsonb_array_length(m.attempts) + 1 < $7
          AND EXISTS (SELECT 1 FROM devices d WHERE d.user_id = m.user_id AND d.enabled AND d.deleted_at IS NULL AND d.id <> m.device_id
                      AND NOT m.attempts @> jsonb_build_array(jsonb_build_object('device_id', d.id)))) AS retry
       FROM messages m JOIN input ON m.id = input.id AND m.device_id = input.device_id
       WHERE ${IN_HAND}
     ), retried AS (
       UPDATE messages m SET state = 'pending', updated_at = $6, attempts = ${CLOSED}, offered_at = NULL, sending_at = NULL, error = NULL
       FROM t WHERE m.id = t.id AND t.retry AND ${IN_HAND}
       RETURNING m.id, m.device_id, t.at, t.error, t.limited
     ), moved AS (
       UPDATE messages m SET state = 'failed', updated_at = $6, failed_at = t.at, sending_at = coalesce(m.sending_at, t.at),
         attempts = ${CLOSED}, offered_at = NULL,
         error = CASE WHEN jsonb_array_length(m.attempts) = 0 THEN t.error
           ELSE 'Failed on every device tried (' || (jsonb_array_length(m.attempts) + 1) || '): '
             || (SELECT string_agg(e->>'error', '; ' ORDER BY i) FROM jsonb_array_elements(${CLOSED}) WITH ORDINALITY AS x(e, i)) END
       FROM t WHERE m.id = t.id AND NOT t.retry AND ${IN_HAND}
       RETURNING m.id, m.user_id, m.device_id, t.at, m.error, t.limited, to_jsonb(m) AS snapshot
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail)
       SELECT id, 'pending'::message_state, device_id, at, 'Failed before sending; to another device: ' || error FROM retried
       UNION ALL SELECT id, 'failed'::message_state, device_id, at, error FROM moved
     ), hits AS (
       SELECT device_id, count(*)::int AS n, bool_or(limited) AS limited
       FROM (SELECT device_id, limited FROM retried UNION ALL SELECT device_id, limited FROM moved) AS h GROUP BY device_id
     ), counted AS (
       UPDATE devices d SET retryable_failures_in_a_row = d.retryable_failures_in_a_row + hits.n,
         paused_until = CASE WHEN hits.limited THEN greatest(d.paused_until, $8::timestamptz) ELSE d.paused_until END,
         pause_reason = CASE WHEN hits.limited AND (d.paused_until IS NULL OR d.paused_until < $8::timestamptz) THEN 'limit_exceeded' ELSE d.pause_reason END
       FROM hits WHERE d.id = hits.device_id
       RETURNING d.id, d.retryable_failures_in_a_row AS n, d.quarantines AS q, d.paused_until AS until
     ), ${webhookEventsCte('$9')}
     SELECT 'retried' AS kind, id, NULL::uuid AS webhook_id, NULL::int AS n, NULL::int AS q, NULL::timestamptz AS until FROM retried
     UNION ALL SELECT 'failed', id, NULL, NULL, NULL, NULL FROM moved
     UNION ALL SELECT 'delivery', id, webhook_id, NULL, NULL, NULL FROM hooks
     UNION ALL SELECT 'device', id, NULL, n, q, until FROM counted`,
    [
      failures.map((f) => f.id),
      failures.map((f) => f.at),
      failures.map((f) => f.error),
      failures.map((f) => f.deviceId),
      failures.map((f) => f.limitExceeded),
      now,
      options.maxAttempts,
      options.limitPausedUntil,
      ['message.failed'],
    ],
  );
  const result = empty;
  for (const row of rows) {
    if (row.kind === 'retried') result.retried.push(row.id);
    else if (row.kind === 'failed') result.failed.push(row.id);
    else if (row.kind === 'delivery') result.deliveries.push({ id: row.id, webhookId: row.webhook_id! });
    else result.devices.push({ id: row.id, retryableFailuresInARow: row.n!, quarantines: row.q!, pausedUntil: row.until });
  }
  return result;
}

/**
 * Quarantines devices: each moves only if its quarantines are still `quarantines` and it is not
 * paused at `now` (so of two dispatchers that saw the threshold, one quarantines it). Returns the
 * devices quarantined.
 */
export async function quarantineDevices(sql: Sql, options: { devices: { id: string; quarantines: number; until: Date }[]; now: Date }): Promise<string[]> {
  if (options.devices.length === 0) return [];
  const { devices, now } = options;
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE devices d SET paused_until = q.until, pause_reason = 'quarantined', quarantines = d.quarantines + 1
     FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) AS q(id, quarantines, until)
     WHERE d.id = q.id AND d.quarantines = q.quarantines AND (d.paused_until IS NULL OR d.paused_until <= $4)
     RETURNING d.id`,
    [devices.map((d) => d.id), devices.map((d) => d.quarantines), devices.map((d) => d.until), now],
  );
  return rows.map((r) => r.id);
}

/** The devices of these users that are paused at `now` (out of round-robin). */
export async function pausedDevices(sql: Sql, options: { userIds: string[]; now: Date }): Promise<Set<string>> {
  if (options.userIds.length === 0) return new Set();
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM devices WHERE user_id = ANY($1::uuid[]) AND paused_until > $2 AND deleted_at IS NULL', [
    options.userIds,
    options.now,
  ]);
  return new Set(rows.map((r) => r.id));
}

/**
 * Assigned messages never offered whose device is not available now (it went offline, or was
 * disabled): back to `pending` at once, for round-robin; a named device's messages stay. Returns
 * the messages moved, to enqueue.
 */
export async function releaseFromUnavailable(sql: Sql, options: { windows: AvailabilityWindows; limit: number; now: Date }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    releaseToPendingStatement(
      `SELECT m.id FROM messages m JOIN devices d ON d.id = m.device_id
       WHERE ${unclaimedSql('m')} AND m.requested_device_id IS NULL
         -- IS NOT TRUE: a device never seen on a stream makes the condition null, not false.
         AND ${availableDeviceCondition('d', windowParams(3))} IS NOT TRUE
       ORDER BY m.assigned_at LIMIT $1 FOR UPDATE OF m SKIP LOCKED`,
      '$2',
      `'Its device went offline before taking it; assigned again.'`,
    ),
    [options.limit, options.now, ...windowValues(options.windows)],
  );
  return rows.map((r) => r.id);
}
