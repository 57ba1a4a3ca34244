/**
 * Dates as phones send them: `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in the phone's offset, but old
 * Android versions also send `+0000`, a missing offset, or malformed offsets such as `+-5:00`
 * (real-devices.md §2b.8). Anything that is not a clear instant falls back, so that one bad date
 * never refuses a request.
 */
const DATE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

// The instants whose ISO text has a four-digit year, as RFC 3339 and the job payloads' date-time
// require, from year 1: Postgres has no year 0 (it reads 0000-01-01 as out of range).
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

const storable = (ms: number) => !Number.isNaN(ms) && ms >= FIRST_INSTANT && ms <= LAST_INSTANT;

/**
 * The instant of RFC 3339 date-time text (a leap second read as the millisecond before it), or
 * undefined when JavaScript cannot read it (an RFC 9557 `[zone]` suffix) or Postgres cannot store it
 * (before year 1, after year 9999). The API's `date-time` format accepts only what this reads.
 */
export function readInstant(text: string): Date | undefined {
  const ms = Date.parse(withoutLeapSecond(text));
  return storable(ms) ? new Date(ms) : undefined;
}

export function parseDeviceDate(text: unknown, fallback: Date): Date {
  if (typeof text !== 'string') return fallback;
  const match = DATE.exec(text.trim());
  if (!match) return fallback;
  const [, day, time, offset] = match;
  // No offset is local time of an unknown zone: the arrival time is closer to the truth.
  if (!offset || !isCalendarDay(day!)) return fallback;
  const zone = offset.toUpperCase() === 'Z' ? 'Z' : offset.length === 3 ? `${offset}:00` : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
  // Fractions beyond milliseconds are cut: Date parses at most three digits reliably.
  const clock = time!.replace(',', '.').replace(/(\.\d{3})\d+$/, '$1');
  const ms = Date.parse(`${day}T${clock}${zone}`);
  // 9999-12-31T23:59-01:00 is in year 10000: its ISO text (+010000-…) is no date-time a report may carry.
  return storable(ms) ? new Date(ms) : fallback;
}

/**
 * RFC 3339 date-time text, as the native device protocol's schema accepts it, that JavaScript's
 * Date can read: a leap second (`23:59:60`), which Date refuses (Invalid Date, then a Postgres
 * error), becomes the last millisecond before it. Other text is returned as it is.
 */
export function withoutLeapSecond(text: string): string {
  return text.replace(/(T\d{2}:\d{2}):60(?:\.\d+)?(?=(?:Z|[+-]\d{2}:\d{2})$)/i, '$1:59.999');
}

/** `Date.parse` rolls 2026-02-31 over into March: refuse what is not a day of the calendar. */
function isCalendarDay(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && date >= 1 && date <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
