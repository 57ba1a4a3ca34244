import type { StickyDevice } from '@smsgw/core';
import type { Sql } from './sql.ts';

/**
 * Sticky sender (docs/decisions.md, "Sticky sender"): the device (and SIM) that last sent to a
 * number or received from it, per user, kept only while the user's `sticky_sender` is on. It is
 * written by the statements that assign and that store incoming SMS (the CTEs below), never by a
 * statement of its own.
 */

/** The sticky device of each message whose user has sticky sender on and whose recipient has one: one query per batch. */
export async function stickyDevicesOf(sql: Sql, messageIds: string[]): Promise<Map<string, StickyDevice>> {
  if (messageIds.length === 0) return new Map();
  const { rows } = await sql.query<{ id: string; device_id: string; sim_number: number | null }>(
    `SELECT m.id, s.device_id, s.sim_number
     FROM messages m
     JOIN users u ON u.id = m.user_id AND u.sticky_sender
     JOIN sticky_senders s ON s.user_id = m.user_id AND s.phone = m.to_number
     WHERE m.id = ANY($1::uuid[]) AND NOT m.is_encrypted`,
    [messageIds],
  );
  return new Map(rows.map((r) => [r.id, { deviceId: r.device_id, simNumber: r.sim_number }]));
}

/**
 * The CTE (named `sticky`) that remembers the device of each message assigned by the statement:
 * `moved` must return `user_id`, `to_number`, `device_id`, `sim_number` and `is_encrypted` (an
 * encrypted recipient is no phone number, so it is never remembered); `now` is the SQL of the time. One row per recipient (the last of the batch wins), in a stable order so that two
 * dispatchers writing the same recipients wait for each other instead of deadlocking.
 */
export function stickyFromAssignedCte(now: string): string {
  return `sticky AS (
       INSERT INTO sticky_senders AS s (user_id, phone, device_id, sim_number, updated_at)
       SELECT DISTINCT ON (moved.user_id, moved.to_number) moved.user_id, moved.to_number, moved.device_id, moved.sim_number, ${now}
       FROM moved JOIN users u ON u.id = moved.user_id AND u.sticky_sender
       WHERE NOT moved.is_encrypted
       ORDER BY moved.user_id, moved.to_number, moved.id DESC
       ON CONFLICT (user_id, phone) DO UPDATE SET device_id = EXCLUDED.device_id, sim_number = EXCLUDED.sim_number, updated_at = EXCLUDED.updated_at
     )`;
}

/**
 * The CTE (named `sticky`) that remembers the receiving device (and SIM) of each incoming SMS the
 * statement stored: `moved` must return `from_number`, `sim_number` and `received_at`; `userId`,
 * `deviceId` and `now` are SQL.
 */
export function stickyFromReceivedCte(userId: string, deviceId: string, now: string): string {
  return `sticky AS (
       INSERT INTO sticky_senders AS s (user_id, phone, device_id, sim_number, updated_at)
       SELECT DISTINCT ON (moved.from_number) ${userId}::uuid, moved.from_number, ${deviceId}::uuid, moved.sim_number, ${now}
       FROM moved WHERE (SELECT sticky_sender FROM users WHERE id = ${userId}::uuid)
       ORDER BY moved.from_number, moved.received_at DESC
       ON CONFLICT (user_id, phone) DO UPDATE SET device_id = EXCLUDED.device_id, sim_number = EXCLUDED.sim_number, updated_at = EXCLUDED.updated_at
     )`;
}
