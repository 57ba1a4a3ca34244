import { MESSAGE_STATES, type MessageState } from '@smsgw/core';
import type { Sql } from './sql.ts';

/**
 * A user's messages created since `since`, counted by hour and state, and by device (the one that
 * handles it, or was named at send): one aggregate over the range of the (user_id, created_at) index.
 */
export async function messageStats(
  sql: Sql,
  options: { userId: string; since: Date },
): Promise<{ byHour: { hour: Date; state: MessageState; count: number }[]; byDevice: { deviceId: string; count: number }[] }> {
  const { rows } = await sql.query<{ by_device: boolean; hour: Date | null; state: MessageState | null; device_id: string | null; n: number }>(
    `SELECT GROUPING(date_trunc('hour', created_at), state) = 3 AS by_device,
            date_trunc('hour', created_at) AS hour, state, coalesce(device_id, requested_device_id) AS device_id, count(*)::int AS n
     FROM messages WHERE user_id = $1 AND created_at >= $2
     GROUP BY GROUPING SETS ((date_trunc('hour', created_at), state), (coalesce(device_id, requested_device_id)))`,
    [options.userId, options.since],
  );
  const byHour = rows
    .filter((r) => !r.by_device && r.hour && r.state && MESSAGE_STATES.includes(r.state))
    .map((r) => ({ hour: r.hour!, state: r.state!, count: r.n }));
  const byDevice = rows.filter((r) => r.by_device && r.device_id).map((r) => ({ deviceId: r.device_id!, count: r.n }));
  return { byHour, byDevice };
}
