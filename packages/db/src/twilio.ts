import { randomBytes, timingSafeEqual } from 'node:crypto';
import { twilioSid, uuidOfSid, type MessageFields } from '@smsgw/core';
import { senderNumberSql } from './sender-number.ts';
import { madeOnFirstUse, type Sql } from './sql.ts';
import type { UserRow } from './users.ts';

/**
 * Twilio's Messages API (docs/compatibility.md): a user's Account SID is `AC` and the 32 hex digits
 * of its id (stable, needing no row); its Messaging Service SID (`MG` + 32 random hex digits, the
 * whole fleet) and Auth Token (32 random hex digits, kept readable because it signs the status
 * callbacks smsgw sends) are made the first time they are asked for.
 */
export interface TwilioAccount {
  accountSid: string;
  messagingServiceSid: string;
  authToken: string;
}

const newToken = () => randomBytes(16).toString('hex');

/** The user's Twilio account, made on first use. */
export async function twilioAccount(sql: Sql, userId: string): Promise<TwilioAccount> {
  const row = await madeOnFirstUse<{ messagingServiceSid: string; authToken: string }>(
    sql,
    `WITH made AS (
       INSERT INTO twilio_accounts (user_id, messaging_service_sid, auth_token) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO NOTHING RETURNING messaging_service_sid, auth_token
     )
     SELECT messaging_service_sid AS "messagingServiceSid", auth_token AS "authToken" FROM made
     UNION ALL SELECT messaging_service_sid, auth_token FROM twilio_accounts WHERE user_id = $1`,
    [userId, `MG${randomBytes(16).toString('hex')}`, newToken()],
  );
  return { accountSid: twilioSid('AC', userId), ...row };
}

/** Replaces the user's Auth Token: the old one stops working at once. */
export async function rotateTwilioAuthToken(sql: Sql, userId: string): Promise<TwilioAccount> {
  await twilioAccount(sql, userId);
  await sql.query('UPDATE twilio_accounts SET auth_token = $2, token_rotated_at = now() WHERE user_id = $1', [userId, newToken()]);
  return twilioAccount(sql, userId);
}

/** The enabled user whose Account SID and Auth Token these are, else null. */
export async function userOfTwilioToken(sql: Sql, accountSid: string, authToken: string): Promise<UserRow | null> {
  const userId = uuidOfSid('AC', accountSid);
  if (!userId) return null;
  const { rows } = await sql.query<UserRow & { authToken: string }>(
    `SELECT u.id, u.name, u.monthly_quota AS "monthlyQuota", t.auth_token AS "authToken"
       FROM users u JOIN twilio_accounts t ON t.user_id = u.id WHERE u.id = $1 AND u.disabled_at IS NULL`,
    [userId],
  );
  const row = rows[0];
  if (!row || !sameText(row.authToken, authToken)) return null;
  return { id: row.id, name: row.name, monthlyQuota: row.monthlyQuota };
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The device and SIM of the user whose reported SIM card has this phone number (`From`), if any. */
export async function findSimByPhoneNumber(sql: Sql, userId: string, phoneNumber: string): Promise<{ deviceId: string; simNumber: number | undefined } | null> {
  const { rows } = await sql.query<{ deviceId: string; simNumber: number | null }>(
    `SELECT d.id AS "deviceId", (card->>'simNumber')::int AS "simNumber"
       FROM devices d, jsonb_array_elements(CASE WHEN jsonb_typeof(d.sim_cards) = 'array' THEN d.sim_cards ELSE '[]' END) card
      WHERE d.user_id = $1 AND d.deleted_at IS NULL AND card->>'phoneNumber' = $2
      ORDER BY d.created_at LIMIT 1`,
    [userId, phoneNumber],
  );
  const row = rows[0];
  return row ? { deviceId: row.deviceId, simNumber: row.simNumber ?? undefined } : null;
}

/** A message as Twilio's Message resource needs it. */
/** A message as Twilio's Message resource reads it: the fields of smsgw's own mapping (MessageFields), and the sender's number. */
export interface TwilioMessageRow
  extends Pick<MessageFields, 'id' | 'to' | 'body' | 'segments' | 'state' | 'error' | 'createdAt' | 'updatedAt' | 'sentAt' | 'deliveredAt'> {
  /** The phone number of the SIM it was (or is to be) sent from, when that SIM reported one. */
  from: string | null;
  sendAt: Date | null;
  failedAt: Date | null;
  cancelRequestedAt: Date | null;
}

const COLUMNS = `m.id, m.to_number AS "to", m.body, m.segments, m.state, m.error, m.send_at AS "sendAt", m.created_at AS "createdAt",
  m.updated_at AS "updatedAt", m.sent_at AS "sentAt", m.delivered_at AS "deliveredAt", m.failed_at AS "failedAt",
  m.cancel_requested_at AS "cancelRequestedAt",
  ${senderNumberSql({ deviceId: 'm.device_id', requestedDeviceId: 'm.requested_device_id', simNumber: 'm.sim_number' })} AS "from"`;

export async function findTwilioMessage(sql: Sql, userId: string, id: string): Promise<TwilioMessageRow | null> {
  const { rows } = await sql.query<TwilioMessageRow>(`SELECT ${COLUMNS} FROM messages m WHERE m.user_id = $1 AND m.id = $2`, [userId, id]);
  return rows[0] ?? null;
}

export interface TwilioMessageFilter {
  userId: string;
  to?: string;
  /** The phone number of the SIM that sent. */
  from?: string;
  /** Sent at or after. */
  sentFrom?: Date;
  /** Sent before. */
  sentBefore?: Date;
  /** Newest first; after this message (the last of the previous page). */
  after?: { createdAt: Date; id: string };
  limit: number;
}

/** The user's messages, newest first, filtered as Twilio's `GET Messages.json`. */
export async function listTwilioMessages(sql: Sql, f: TwilioMessageFilter): Promise<TwilioMessageRow[]> {
  const { rows } = await sql.query<TwilioMessageRow>(
    `SELECT * FROM (SELECT ${COLUMNS} FROM messages m
      WHERE m.user_id = $1 AND ($2::text IS NULL OR m.to_number = $2)
        AND ($3::timestamptz IS NULL OR m.sent_at >= $3) AND ($4::timestamptz IS NULL OR m.sent_at < $4)
        AND ($5::timestamptz IS NULL OR (m.created_at, m.id) < ($5, $6::uuid))
      ORDER BY m.created_at DESC, m.id DESC) x
     WHERE $7::text IS NULL OR x."from" = $7 LIMIT $8`,
    [f.userId, f.to ?? null, f.sentFrom ?? null, f.sentBefore ?? null, f.after?.createdAt ?? null, f.after?.id ?? null, f.from ?? null, f.limit],
  );
  return rows;
}

/** Twilio's redaction (`Body=` on a message): its text is emptied, nothing else changes. */
export async function redactMessageBody(sql: Sql, userId: string, id: string): Promise<void> {
  await sql.query(`UPDATE messages SET body = '', updated_at = now() WHERE user_id = $1 AND id = $2`, [userId, id]);
}

/** Deletes a message in a final state (Twilio's `DELETE Messages/{Sid}.json`); false when it is not final (or not the user's). */
export async function deleteFinalMessage(sql: Sql, userId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query(`DELETE FROM messages WHERE user_id = $1 AND id = $2 AND state IN ('sent', 'delivered', 'failed', 'cancelled')`, [
    userId,
    id,
  ]);
  return rowCount === 1;
}
