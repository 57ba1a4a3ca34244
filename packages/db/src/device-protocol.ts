import { statesLeadingTo } from '@smsgw/core';
import type { Db } from './client.ts';
import { DEVICE_TOKEN_PREFIX, hashSecret, sameHash } from './secrets.ts';

/** The device side of the protocol: token authentication, being seen, claiming messages. */
export interface AuthenticatedDevice {
  id: string;
  userId: string;
  enabled: boolean;
  lastSeenAt: Date | null;
}

export async function authenticateDevice(db: Db, token: string): Promise<AuthenticatedDevice | null> {
  if (!token.startsWith(DEVICE_TOKEN_PREFIX)) return null;
  const hash = hashSecret(token);
  const device = await db.device.findUnique({
    where: { tokenHash: hash },
    select: { id: true, userId: true, enabled: true, lastSeenAt: true, deletedAt: true, tokenHash: true },
  });
  if (!device || device.deletedAt || !sameHash(device.tokenHash, hash)) return null;
  return { id: device.id, userId: device.userId, enabled: device.enabled, lastSeenAt: device.lastSeenAt };
}

/** Records that the device was seen, at most once per `everyMs` (availability is measured in minutes). */
export async function markDeviceSeen(db: Db, device: AuthenticatedDevice, now: Date, everyMs = 5000): Promise<void> {
  if (device.lastSeenAt && now.getTime() - device.lastSeenAt.getTime() < everyMs) return;
  await db.device.updateMany({ where: { id: device.id }, data: { lastSeenAt: now } });
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
 * returned once, to one device, even when the same device claims twice at once.
 */
export async function claimMessages(db: Db, options: { deviceId: string; limit: number; now: Date }): Promise<ClaimedMessage[]> {
  const { deviceId, limit, now } = options;
  const from = statesLeadingTo('sending');
  const rows = await db.$queryRaw<{ id: string; to_number: string; body: string; created_at: Date }[]>`
    WITH picked AS (
      SELECT id FROM messages
      WHERE device_id = ${deviceId}::uuid AND state = 'assigned'
      ORDER BY created_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), moved AS (
      UPDATE messages m SET state = 'sending', sending_at = ${now}, updated_at = ${now}
      FROM picked WHERE m.id = picked.id AND m.state = ANY(${from}::message_state[])
      RETURNING m.id, m.device_id, m.to_number, m.body, m.created_at
    ), history AS (
      INSERT INTO message_events (message_id, state, device_id, at)
      SELECT id, 'sending', device_id, ${now} FROM moved
    )
    SELECT id, to_number, body, created_at FROM moved ORDER BY created_at, id`;
  return rows.map((r) => ({ id: r.id, to: r.to_number, body: r.body, createdAt: r.created_at }));
}

/** Of `ids`, those that are messages currently handled by the device. */
export async function messagesOfDevice(db: Db, options: { deviceId: string; ids: string[] }): Promise<Set<string>> {
  if (options.ids.length === 0) return new Set();
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM messages WHERE id = ANY(${options.ids}::uuid[]) AND device_id = ${options.deviceId}::uuid`;
  return new Set(rows.map((r) => r.id));
}
