import { randomBytes, randomInt } from 'node:crypto';
import { newId } from '@smsgw/core';
import { isUniqueViolation, type SqlPool } from './sql.ts';
import { DEVICE_TOKEN_PREFIX, generateSecret, hashSecret } from './secrets.ts';

/**
 * Pairings (real-devices.md §1): a one-time 8-digit code and token with which a phone enrols
 * itself as one of the user's devices. Both are stored only as SHA-256; the first registration
 * with either spends the pairing.
 */
export const PAIRING_TOKEN_PREFIX = 'smsgw_pt_';

export interface NewPairing {
  id: string;
  code: string;
  token: string;
  expiresAt: Date;
}

export async function createPairing(sql: SqlPool, options: { userId: string; name?: string; ttlSeconds: number; now?: Date }): Promise<NewPairing> {
  const now = options.now ?? new Date();
  const expiresAt = new Date(now.getTime() + options.ttlSeconds * 1000);
  for (let attempt = 0; ; attempt++) {
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    const token = generateSecret(PAIRING_TOKEN_PREFIX);
    const id = newId();
    try {
      await sql.query('INSERT INTO device_pairings (id, user_id, name, code_hash, token_hash, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        id,
        options.userId,
        options.name ?? null,
        hashSecret(code),
        hashSecret(token),
        expiresAt,
        now,
      ]);
      return { id, code, token, expiresAt };
    } catch (error) {
      // The same code as a pairing of the last day: draw another.
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
  }
}

export interface PhoneRegistration {
  name: string;
  appVersion: string | null;
  pushToken: boolean;
  simCards: unknown;
}

export interface RegisteredPhone {
  id: string;
  userId: string;
  token: string;
}

/**
 * Spends the pairing whose code or token is `secret` and creates the SMS Gate device it enrols, in
 * one transaction; null when the secret is unknown, spent or expired.
 */
export async function registerPairedPhone(sql: SqlPool, secret: string, phone: PhoneRegistration, now = new Date()): Promise<RegisteredPhone | null> {
  const column = secret.startsWith(PAIRING_TOKEN_PREFIX) ? 'token_hash' : 'code_hash';
  const token = generateSecret(DEVICE_TOKEN_PREFIX);
  const id = newId();
  // One statement: the compare-and-set spends the pairing once, whatever registrations race for
  // it, and names the device it creates (the foreign key is checked once both are written).
  const { rows } = await sql.query<{ user_id: string }>(
    `WITH spent AS (
       UPDATE device_pairings SET used_at = $2, device_id = $3 WHERE ${column} = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, name
     )
     INSERT INTO devices (id, user_id, name, protocol, token_hash, app_version, push_token, sim_cards, signing_key, inbound_secret, created_at, updated_at)
     SELECT $3, user_id, coalesce(name, $4), 'sms_gate', $5, $6, $7, $8::jsonb, $9, $10, $2, $2 FROM spent
     RETURNING user_id`,
    [
      hashSecret(secret),
      now,
      id,
      phone.name,
      hashSecret(token),
      phone.appVersion,
      phone.pushToken,
      phone.simCards === null || phone.simCards === undefined ? null : JSON.stringify(phone.simCards),
      randomBytes(24).toString('base64url'),
      randomBytes(24).toString('base64url'),
    ],
  );
  return rows[0] ? { id, userId: rows[0].user_id, token } : null;
}
