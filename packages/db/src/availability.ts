import type { AvailabilityWindows } from '@smsgw/core';
import type { Sql } from './sql.ts';

/**
 * The SQL of `isDeviceAvailable` (packages/core, device-availability.ts) on the devices row `d`,
 * with the windows as the parameters `$stream` and `$request` (timestamptz); a test holds the two
 * statements of the rule together.
 */
export function availableDeviceCondition(d: string, stream: string, request: string): string {
  return `(${d}.enabled AND ${d}.deleted_at IS NULL AND (
      ${d}.stream_seen_at >= ${stream}
      OR (${d}.last_seen_at >= ${request} AND (${d}.stream_seen_at IS NULL OR ${d}.stream_seen_at < ${request}))))`;
}

/** Available devices of each user, in a stable order (by id). */
export async function availableDevices(sql: Sql, options: { userIds: string[]; windows: AvailabilityWindows }): Promise<Map<string, string[]>> {
  const byUser = new Map<string, string[]>();
  if (options.userIds.length === 0) return byUser;
  const { rows } = await sql.query<{ id: string; user_id: string }>(
    `SELECT id, user_id FROM devices d
     WHERE user_id = ANY($1::uuid[]) AND ${availableDeviceCondition('d', '$2', '$3')}
     ORDER BY user_id, id`,
    [options.userIds, options.windows.streamSince, options.windows.requestSince],
  );
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.id]);
  return byUser;
}
