import { TWILIO_INCOMING_FORMAT } from '@smsgw/core';
import type { Sql } from './sql.ts';
import type { Queryable } from './sql.ts';
import type { UserRow } from './users.ts';
import { recordDeliveryAttempt, type AttemptResult } from './webhook-deliveries.ts';

/**
 * Twilio's incoming SMS (docs/compatibility.md): where the URLs are read when an SMS arrives, the
 * callback the inbound statement writes for it, and what the dispatcher needs to act on the answer.
 */

/**
 * SQL of one row `twilio_url`: the Twilio incoming-SMS URL for SIM `sim` of device `device` (the
 * SIM's own, else the device's; null when neither is set or the SIM is unknown).
 */
export function twilioSmsUrlSql(device: string, sim: string): string {
  return `SELECT coalesce(d.sim_twilio_sms_urls->>(${sim}::text), d.twilio_sms_url) AS twilio_url FROM devices d WHERE d.id = ${device}::uuid`;
}

/**
 * The part of the inbound statement that writes, for each SMS stored now with a URL (`moved` with
 * `callback_id`, `input` with `twilio_url`), its callback in Twilio's incoming format and the one
 * delivery of it. The callback's context fixes `To` as the SMS arrived: the number the device says
 * received it, else its SIM card's phone number, else the device id. Returns `twilio_hooks`.
 */
export function twilioIncomingCte(device: string, now: string): string {
  const simPhone = `(SELECT nullif(card->>'phoneNumber', '') FROM devices d,
         jsonb_array_elements(CASE WHEN jsonb_typeof(d.sim_cards) = 'array' THEN d.sim_cards ELSE '[]' END) card
        WHERE d.id = ${device}::uuid AND (card->>'simNumber')::int IS NOT DISTINCT FROM coalesce(moved.sim_number, 1) LIMIT 1)`;
  return `twilio_callbacks AS (
       INSERT INTO message_callbacks (id, user_id, url, format, events, context, created_at)
       SELECT moved.callback_id, moved.user_id, input.twilio_url, '${TWILIO_INCOMING_FORMAT}', ARRAY['received'],
              jsonb_build_object('to', coalesce(nullif(moved.to_number, ''), ${simPhone}, ${device}::text)), ${now}
       FROM moved JOIN input ON input.id = moved.id
       WHERE moved.callback_id IS NOT NULL
     ), twilio_hooks AS (
       INSERT INTO webhook_deliveries (id, webhook_id, callback_id, user_id, type, message_id, occurred_at, data)
       SELECT gen_random_uuid(), NULL::uuid, moved.callback_id, moved.user_id, 'message.received', moved.id, moved.at, moved.snapshot
       FROM moved WHERE moved.callback_id IS NOT NULL
       RETURNING id, callback_id
     )`;
}

/** The user a reply is sent for, while enabled (a disabled user sends nothing). */
export async function enabledUserById(sql: Sql, userId: string): Promise<UserRow | null> {
  const { rows } = await sql.query<UserRow>(`SELECT id, name, monthly_quota AS "monthlyQuota" FROM users WHERE id = $1 AND disabled_at IS NULL`, [userId]);
  return rows[0] ?? null;
}

/** Another run of the delivery recorded its outcome first: this one's replies are not stored. */
export class DeliveryAlreadyRecorded extends Error {
  constructor() {
    super('The delivery was already recorded.');
  }
}

/**
 * The idempotency record of the replies to one answer: the delivery's success itself, recorded
 * first in the transaction that stores the replies. A second run of the delivery waits at the
 * delivery's row, then finds it no longer pending and stores nothing; a crash before the commit
 * leaves the delivery pending (it is tried again) and no reply stored.
 */
export function deliveryRecorder(deliveryId: string, result: AttemptResult) {
  return {
    async record(client: Queryable): Promise<void> {
      if (!(await recordDeliveryAttempt(client, deliveryId, result))) throw new DeliveryAlreadyRecorded();
    },
    async amend(): Promise<void> {},
  };
}

/** How the POST of one received SMS to its Twilio URL went (`GET /api/v1/twilio/sms-deliveries`). */
export interface TwilioSmsDeliveryRow {
  id: string;
  receivedId: string;
  deviceId: string;
  from: string;
  url: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/** The user's deliveries of received SMS to Twilio URLs, newest SMS first. */
export async function listTwilioSmsDeliveries(
  sql: Sql,
  o: { userId: string; limit: number; offset: number },
): Promise<{ rows: TwilioSmsDeliveryRow[]; total: number }> {
  const [{ rows }, counted] = await Promise.all([
    sql.query<TwilioSmsDeliveryRow>(
      `SELECT d.id, r.id AS "receivedId", r.device_id AS "deviceId", r.from_number AS "from", c.url, d.state, d.attempts,
              d.last_status_code AS "lastStatusCode", d.last_error AS "lastError", d.last_attempt_at AS "lastAttemptAt",
              d.next_attempt_at AS "nextAttemptAt", d.created_at AS "createdAt"
         FROM received_messages r
         JOIN message_callbacks c ON c.id = r.callback_id
         JOIN webhook_deliveries d ON d.callback_id = c.id
        WHERE r.user_id = $1 AND r.callback_id IS NOT NULL
        ORDER BY r.created_at DESC, r.id DESC LIMIT $2 OFFSET $3`,
      [o.userId, o.limit, o.offset],
    ),
    sql.query<{ total: number }>(`SELECT count(*)::int AS total FROM received_messages WHERE user_id = $1 AND callback_id IS NOT NULL`, [o.userId]),
  ]);
  return { rows, total: counted.rows[0]!.total };
}
