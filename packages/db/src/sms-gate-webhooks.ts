import { newId, RECEIVED_EVENT_TYPE, SMS_GATE_EVENTS, smsGateEventOf, type SmsGateEvent } from '@smsgw/core';
import type { Sql, SqlPool } from './sql.ts';
import { inTransaction } from './sql.ts';
import { lockUserWithin } from './webhooks.ts';
import type { DeliveryRef } from './webhook-deliveries.ts';

/**
 * SMS Gate-format webhook endpoints (docs/compatibility.md): rows of the one `webhooks` table with
 * `format = 'sms_gate'`, one SMS Gate event each (stored as the engine's event type that carries
 * it), named by their client's id, optionally for one device. The engine writes and delivers their
 * events like any endpoint's; webhook-formats/sms-gate.ts renders them.
 */

const FORMAT = 'sms_gate';

export interface SmsGateWebhookRow {
  id: string;
  deviceId: string | null;
  url: string;
  event: SmsGateEvent;
}

const COLUMNS = 'w.client_id AS "clientId", w.device_id AS "deviceId", w.url, w.events';

function toRow(w: { clientId: string | null; deviceId: string | null; url: string; events: string[] }): SmsGateWebhookRow {
  return { id: w.clientId!, deviceId: w.deviceId, url: w.url, event: smsGateEventOf(w.events[0]!)! };
}

/** The user's SMS Gate-format endpoints, oldest first. */
export async function listSmsGateWebhooks(sql: SqlPool, userId: string): Promise<SmsGateWebhookRow[]> {
  const { rows } = await sql.query(`SELECT ${COLUMNS} FROM webhooks w WHERE w.user_id = $1 AND w.format = '${FORMAT}' ORDER BY w.created_at, w.id`, [userId]);
  return rows.map(toRow);
}

/**
 * Registers an endpoint, or replaces the one with the same client id (enabled again, should smsgw
 * have disabled it after a 410). A new one counts against `limit`, with the user's other endpoints.
 */
export async function replaceSmsGateWebhook(
  sql: SqlPool,
  o: { userId: string; clientId: string; url: string; event: SmsGateEvent; deviceId: string | null; limit: number },
): Promise<SmsGateWebhookRow> {
  const values = [o.userId, o.clientId, o.url, [SMS_GATE_EVENTS[o.event]], o.deviceId, new Date()];
  return inTransaction(sql, async (tx) => {
    // Locks the user's row first: registrations of one user run one at a time, so none passes the limit or races a replace.
    await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [o.userId]);
    const { rows: replaced } = await tx.query(
      `UPDATE webhooks w SET url = $3, events = $4, device_id = $5, enabled = true, disabled_reason = NULL, updated_at = $6
        WHERE w.user_id = $1 AND w.client_id = $2 AND w.format = '${FORMAT}' RETURNING ${COLUMNS}`,
      values,
    );
    if (replaced[0]) return toRow(replaced[0]);
    await lockUserWithin(tx, o.userId, o.limit);
    const { rows } = await tx.query(
      `INSERT INTO webhooks AS w (id, user_id, client_id, url, events, device_id, enabled, format, secret, created_at, updated_at)
       VALUES ($7, $1, $2, $3, $4, $5, true, '${FORMAT}', '', $6, $6) RETURNING ${COLUMNS}`,
      [...values, newId()],
    );
    return toRow(rows[0]);
  });
}

/** Deletes the endpoint (with its deliveries, so nothing more is sent to it); false if there was none. */
export async function deleteSmsGateWebhook(sql: SqlPool, o: { userId: string; clientId: string }): Promise<boolean> {
  const { rowCount } = await sql.query(`DELETE FROM webhooks WHERE user_id = $1 AND client_id = $2 AND format = '${FORMAT}'`, [o.userId, o.clientId]);
  return (rowCount ?? 0) > 0;
}

/**
 * `POST /inbox/refresh`: writes, in one statement, an `sms:received` delivery to each of the user's
 * enabled SMS Gate `sms:received` endpoints (their device filter applying) for each SMS received in
 * [since, until] (by the device's time of receipt), of one device or all. More than `cap` SMS in
 * the window write nothing: `count` then says so (cap + 1), and the caller asks for a narrower one.
 */
export async function resendReceived(
  sql: Sql,
  o: { userId: string; deviceId: string | null; since: Date; until: Date; cap: number; now: Date },
): Promise<{ count: number; deliveries: DeliveryRef[] }> {
  const { rows } = await sql.query<{ kind: string; id: string | null; webhook_id: string | null; n: number }>(
    `WITH picked AS (
       SELECT r.id, r.device_id, r.user_id, to_jsonb(r) AS snapshot FROM received_messages r
       WHERE r.user_id = $1 AND ($2::uuid IS NULL OR r.device_id = $2) AND r.received_at BETWEEN $3 AND $4
       ORDER BY r.received_at, r.id LIMIT $5::int + 1
     ), counted AS (SELECT count(*)::int AS n FROM picked), hooks AS (
       INSERT INTO webhook_deliveries (id, webhook_id, user_id, type, message_id, occurred_at, data, created_at)
       SELECT gen_random_uuid(), w.id, w.user_id, $6, p.id, $7, p.snapshot, $7
       FROM picked p
       JOIN webhooks w ON w.user_id = p.user_id AND w.format = '${FORMAT}' AND w.enabled AND $6 = ANY(w.events)
         AND (w.device_id IS NULL OR w.device_id = p.device_id)
       WHERE (SELECT n FROM counted) <= $5
       RETURNING id, webhook_id
     )
     SELECT 'count' AS kind, NULL::uuid AS id, NULL::uuid AS webhook_id, n FROM counted
     UNION ALL SELECT 'delivery', id, webhook_id, NULL FROM hooks`,
    [o.userId, o.deviceId, o.since, o.until, o.cap, RECEIVED_EVENT_TYPE, o.now],
  );
  return {
    count: rows.find((r) => r.kind === 'count')!.n,
    deliveries: rows.filter((r) => r.kind === 'delivery').map((r) => ({ id: r.id!, webhookId: r.webhook_id! })),
  };
}
