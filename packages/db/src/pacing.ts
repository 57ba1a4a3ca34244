import type { RateLimits } from '@smsgw/core';
import type { Sql } from './sql.ts';

/** The rate limits of those of `deviceIds` that have any (devices without a limit are left out). */
export async function deviceRateLimits(sql: Sql, deviceIds: string[]): Promise<Map<string, RateLimits>> {
  if (deviceIds.length === 0) return new Map();
  const { rows } = await sql.query<{ id: string; per_minute: number | null; per_hour: number | null; per_day: number | null }>(
    `SELECT id, rate_limit_per_minute AS per_minute, rate_limit_per_hour AS per_hour, rate_limit_per_day AS per_day
       FROM devices
      WHERE id = ANY($1::uuid[])
        AND (rate_limit_per_minute IS NOT NULL OR rate_limit_per_hour IS NOT NULL OR rate_limit_per_day IS NOT NULL)`,
    [deviceIds],
  );
  return new Map(rows.map((r) => [r.id, { perMinute: r.per_minute, perHour: r.per_hour, perDay: r.per_day }]));
}
