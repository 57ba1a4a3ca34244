import type { AvailabilityWindows, DeviceProtocol } from '@smsgw/core';
import type { Sql } from './sql.ts';

/** The SQL expressions (parameters, timestamptz) of the three windows of `AvailabilityWindows`. */
export interface WindowParams {
  stream: string;
  closed: string;
  request: string;
}

/** The windows as positional parameters from `$first` on, in the order of `windowValues`. */
export function windowParams(first: number): WindowParams {
  return { stream: `$${first}::timestamptz`, closed: `$${first + 1}::timestamptz`, request: `$${first + 2}::timestamptz` };
}

export function windowValues(windows: AvailabilityWindows): Date[] {
  return [windows.streamSince, windows.closedSince, windows.requestSince];
}

/**
 * The SQL of `isDeviceAvailable` (packages/core, device-availability.ts) on the devices row `d`;
 * a test holds the two statements of the rule together. A stream closed no earlier than its last
 * refresh counts for the grace from its close; a held one for keepalive + grace from its refresh.
 */
export function availableDeviceCondition(d: string, w: WindowParams): string {
  return `(${d}.enabled AND ${d}.deleted_at IS NULL AND (
      CASE WHEN ${d}.stream_closed_at >= ${d}.stream_seen_at THEN ${d}.stream_closed_at >= ${w.closed} ELSE ${d}.stream_seen_at >= ${w.stream} END
      OR (${d}.last_seen_at >= ${w.request} AND (${d}.stream_seen_at IS NULL OR ${d}.stream_seen_at < ${w.request}))))`;
}

/** Available devices of each user, in a stable order (by id); with `protocol`, only those of it. */
export async function availableDevices(
  sql: Sql,
  options: { userIds: string[]; windows: AvailabilityWindows; protocol?: DeviceProtocol },
): Promise<Map<string, string[]>> {
  const byUser = new Map<string, string[]>();
  if (options.userIds.length === 0) return byUser;
  const { rows } = await sql.query<{ id: string; user_id: string }>(
    `SELECT id, user_id FROM devices d
     WHERE user_id = ANY($1::uuid[]) AND ${availableDeviceCondition('d', windowParams(2))}
       AND ($5::device_protocol IS NULL OR d.protocol = $5::device_protocol)
     ORDER BY user_id, id`,
    [options.userIds, ...windowValues(options.windows), options.protocol ?? null],
  );
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.id]);
  return byUser;
}
