import { statesLeadingTo } from '@smsgw/core';
import type { Sql } from './sql.ts';
import { DEVICE_TOKEN_PREFIX, hashSecret, sameHash } from './secrets.ts';

/** The device side of the protocol: token authentication, being seen, claiming messages. */
export interface AuthenticatedDevice {
  id: string;
  userId: string;
  enabled: boolean;
  lastSeenAt: Date | null;
}

export async function authenticateDevice(sql: Sql, token: string): Promise<AuthenticatedDevice | null> {
  if (!token.startsWith(DEVICE_TOKEN_PREFIX)) return null;
  const hash = hashSecret(token);
  const { rows } = await sql.query<{ id: string; user_id: string; enabled: boolean; last_seen_at: Date | null; token_hash: Buffer }>(
    'SELECT id, user_id, enabled, last_seen_at, token_hash FROM devices WHERE token_hash = $1 AND deleted_at IS NULL',
    [Buffer.from(hash)],
  );
  const device = rows[0];
  if (!device || !sameHash(device.token_hash, hash)) return null;
  return { id: device.id, userId: device.user_id, enabled: device.enabled, lastSeenAt: device.last_seen_at };
}

/** Records that the device was seen, at most once per `everyMs` (availability is measured in minutes). */
export async function markDeviceSeen(sql: Sql, device: AuthenticatedDevice, now: Date, everyMs = 5000): Promise<void> {
  if (device.lastSeenAt && now.getTime() - device.lastSeenAt.getTime() < everyMs) return;
  await sql.query('UPDATE devices SET last_seen_at = $2 WHERE id = $1', [device.id, now]);
  device.lastSeenAt = now;
}

export interface ClaimedMessage {
  id: string;
  to: string;
  body: string;
  createdAt: Date;
}

/**
 * Moves up to `limit` of the device's assigned messages to `sending` and returns them, oldest
 * first. Rows are locked with SKIP LOCKED and moved with a compare-and-set, so a message is
 * returned once, to one device, even when the same device claims twice at once. A disabled or
 * deleted device claims nothing.
 */
export async function claimMessages(sql: Sql, options: { deviceId: string; limit: number; now: Date }): Promise<ClaimedMessage[]> {
  const { deviceId, limit, now } = options;
  const { rows } = await sql.query<{ id: string; to_number: string; body: string; created_at: Date }>(
    `WITH picked AS (
       SELECT m.id FROM messages m
       WHERE m.device_id = $1 AND m.state = 'assigned'
         AND EXISTS (SELECT 1 FROM devices d WHERE d.id = $1 AND d.enabled AND d.deleted_at IS NULL)
       ORDER BY m.created_at, m.id
       LIMIT $2
       FOR UPDATE OF m SKIP LOCKED
     ), moved AS (
       UPDATE messages m SET state = 'sending', sending_at = $3, updated_at = $3
       FROM picked WHERE m.id = picked.id AND m.state = ANY($4::message_state[])
       RETURNING m.id, m.device_id, m.to_number, m.body, m.created_at
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at)
       SELECT id, 'sending', device_id, $3 FROM moved
     )
     SELECT id, to_number, body, created_at FROM moved ORDER BY created_at, id`,
    [deviceId, limit, now, statesLeadingTo('sending')],
  );
  return rows.map((r) => ({ id: r.id, to: r.to_number, body: r.body, createdAt: r.created_at }));
}

/** Of `ids`, those that are messages currently handled by the device. */
export async function messagesOfDevice(sql: Sql, options: { deviceId: string; ids: string[] }): Promise<Set<string>> {
  if (options.ids.length === 0) return new Set();
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM messages WHERE id = ANY($1::uuid[]) AND device_id = $2', [
    options.ids,
    options.deviceId,
  ]);
  return new Set(rows.map((r) => r.id));
}
