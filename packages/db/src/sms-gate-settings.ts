import { randomBytes } from 'node:crypto';
import type { SmsGateSettings } from '@smsgw/core';
import { madeOnFirstUse, type Sql } from './sql.ts';
import { inTransaction } from './sql.ts';

/**
 * The account's settings on SMS Gate's client API (docs/compatibility.md): SMS Gate's
 * `DeviceSettings` object (top-level camel keys, snake_case fields inside) as the user stored it.
 * The row is made on first use with a random `webhooks.signing_key`, so that the SMS Gate-format
 * webhooks smsgw emits are always signed, as the phone's are with its own random key.
 */

/** The SQL of the signing key of the user whose settings row is `s`. */
export const SMS_GATE_SIGNING_KEY_SQL = (s: string) => `${s}.settings->'webhooks'->>'signing_key'`;

const newSigningKey = () => randomBytes(16).toString('hex');
const made = () => JSON.stringify({ webhooks: { signing_key: newSigningKey() } });

/** The user's settings, made on first use. */
export async function smsGateSettings(sql: Sql, userId: string): Promise<SmsGateSettings> {
  const row = await madeOnFirstUse<{ settings: SmsGateSettings }>(
    sql,
    `WITH made AS (
       INSERT INTO sms_gate_settings (user_id, settings) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING RETURNING settings
     )
     SELECT settings FROM made UNION ALL SELECT settings FROM sms_gate_settings WHERE user_id = $1`,
    [userId, made()],
  );
  return row.settings;
}

/** Replaces the user's settings with `settings` (the caller has merged and checked them). */
export async function storeSmsGateSettings(sql: Sql, userId: string, settings: SmsGateSettings): Promise<void> {
  await sql.query(
    `INSERT INTO sms_gate_settings (user_id, settings, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (user_id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = EXCLUDED.updated_at`,
    [userId, JSON.stringify(settings)],
  );
}

/**
 * Changes the user's settings with `change` (given the current ones, made on first use), the row
 * locked meanwhile so that concurrent changes apply one after the other; `change` may throw to
 * change nothing. Returns the stored settings.
 */
export async function updateSmsGateSettings(sql: Sql, userId: string, change: (current: SmsGateSettings) => SmsGateSettings): Promise<SmsGateSettings> {
  return inTransaction(sql, async (client) => {
    await client.query(`INSERT INTO sms_gate_settings (user_id, settings) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING`, [userId, made()]);
    const { rows } = await client.query<{ settings: SmsGateSettings }>(`SELECT settings FROM sms_gate_settings WHERE user_id = $1 FOR UPDATE`, [userId]);
    const next = change(rows[0]!.settings);
    await client.query(`UPDATE sms_gate_settings SET settings = $2, updated_at = now() WHERE user_id = $1`, [userId, JSON.stringify(next)]);
    return next;
  });
}

/** The user's SMS Gate phones, to be told their settings changed. */
export async function smsGatePhoneIds(sql: Sql, userId: string): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM devices WHERE user_id = $1 AND protocol = 'sms_gate' AND deleted_at IS NULL`, [userId]);
  return rows.map((r) => r.id);
}
