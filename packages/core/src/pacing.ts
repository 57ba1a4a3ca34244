/**
 * Per-device pacing (issue 16): carriers cap how many messages a SIM sends per minute, hour or day,
 * and Android refuses bursts. A device's limits become the windows the dispatcher paces it by, and
 * the one setting the SMS Gate app has of its own.
 */
export interface RateLimits {
  perMinute: number | null;
  perHour: number | null;
  perDay: number | null;
}

/** The most a rate limit may say: well beyond any SIM, small enough for Redis to log a day of it. */
export const MAX_RATE_LIMIT = 100_000;

const WINDOWS = [
  { key: 'perMinute', windowMs: 60_000, period: 'PerMinute' },
  { key: 'perHour', windowMs: 3_600_000, period: 'PerHour' },
  { key: 'perDay', windowMs: 86_400_000, period: 'PerDay' },
] as const;

/** The windows to pace by: one per limit that is set. */
export function paceWindows(limits: RateLimits): { windowMs: number; limit: number }[] {
  return WINDOWS.flatMap(({ key, windowMs }) => (limits[key] === null ? [] : [{ windowMs, limit: limits[key] }]));
}

/**
 * The SMS Gate app's own limit (`messages.limit_period`, `limit_value`): it has one period, so the
 * shortest window that is set, which is the one that spaces messages out; smsgw enforces them all.
 */
export function phonePacing(limits: RateLimits): { limit_period: 'PerMinute' | 'PerHour' | 'PerDay'; limit_value: number } | null {
  const first = WINDOWS.find(({ key }) => limits[key] !== null);
  return first ? { limit_period: first.period, limit_value: limits[first.key]! } : null;
}
