import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isUuid } from '@smsgw/core';
import type { AuthenticatedDevice } from './device-protocol.ts';
import type { Sql } from './sql.ts';

/**
 * What the SMS Gate mobile API reads and writes of a phone beyond the device core: its push flag,
 * SIM cards and the two secrets of its incoming-SMS webhook (real-devices.md §2).
 */

/** `PATCH /device`: the app states whether it holds a push token now, and its SIM cards when it knows them. */
export async function updatePhone(sql: Sql, options: { deviceId: string; pushToken: boolean; simCards: unknown[] | undefined }): Promise<void> {
  await sql.query(
    `UPDATE devices SET push_token = $2, sim_cards = coalesce($3::jsonb, sim_cards), updated_at = now()
     WHERE id = $1 AND deleted_at IS NULL AND (push_token IS DISTINCT FROM $2 OR ($3::jsonb IS NOT NULL AND sim_cards IS DISTINCT FROM $3::jsonb))`,
    [options.deviceId, options.pushToken, options.simCards === undefined ? null : JSON.stringify(options.simCards)],
  );
}

export interface PhoneSecrets {
  signingKey: string;
  inboundSecret: string;
}

/**
 * The device's webhook signing key and inbound URL secret, made once (registration makes them; a
 * phone device created otherwise gets them on first use) and then stable: each change would ask
 * the owner to restart the app.
 */
export async function phoneSecrets(sql: Sql, deviceId: string): Promise<PhoneSecrets> {
  const fresh = () => randomBytes(24).toString('base64url');
  // Read when both exist (every settings and webhooks fetch of a phone): only a first use writes the row.
  const { rows } = await sql.query<{ signing_key: string; inbound_secret: string }>(
    `WITH kept AS (SELECT signing_key, inbound_secret FROM devices WHERE id = $1 AND signing_key IS NOT NULL AND inbound_secret IS NOT NULL),
     made AS (
       UPDATE devices SET signing_key = coalesce(signing_key, $2), inbound_secret = coalesce(inbound_secret, $3)
       WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM kept) RETURNING signing_key, inbound_secret
     )
     SELECT signing_key, inbound_secret FROM kept UNION ALL SELECT signing_key, inbound_secret FROM made`,
    [deviceId, fresh(), fresh()],
  );
  const row = rows[0];
  if (!row) throw new Error(`device ${deviceId} vanished`);
  return { signingKey: row.signing_key, inboundSecret: row.inbound_secret };
}

export interface WebhookDevice {
  device: AuthenticatedDevice;
  signingKey: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The SMS Gate device whose inbound webhook URL this is, when `secret` is its URL secret
 * (compared in constant time); null otherwise.
 */
export async function webhookDevice(sql: Sql, deviceId: string, secret: string): Promise<WebhookDevice | null> {
  if (!isUuid(deviceId)) return null;
  const { rows } = await sql.query<{
    id: string;
    user_id: string;
    enabled: boolean;
    last_seen_at: Date | null;
    app_version: string | null;
    signing_key: string | null;
    inbound_secret: string | null;
  }>(
    `SELECT id, user_id, enabled, last_seen_at, app_version, signing_key, inbound_secret FROM devices
     WHERE id = $1 AND protocol = 'sms_gate' AND deleted_at IS NULL`,
    [deviceId],
  );
  const row = rows[0];
  const expected = digest(row?.inbound_secret ?? randomBytes(24).toString('base64url'));
  if (!timingSafeEqual(expected, digest(secret)) || !row?.signing_key || !row.inbound_secret) return null;
  return {
    device: { id: row.id, userId: row.user_id, enabled: row.enabled, protocol: 'sms_gate', lastSeenAt: row.last_seen_at, appVersion: row.app_version },
    signingKey: row.signing_key,
  };
}
