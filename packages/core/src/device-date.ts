/**
 * Dates as phones send them: `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in the phone's offset, but old
 * Android versions also send `+0000`, a missing offset, or malformed offsets such as `+-5:00`
 * (real-devices.md §2b.8). Anything that is not a clear instant falls back, so that one bad date
 * never refuses a request.
 */
const DATE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

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
  return Number.isNaN(ms) ? fallback : new Date(ms);
}

/** `Date.parse` rolls 2026-02-31 over into March: refuse what is not a day of the calendar. */
function isCalendarDay(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && date >= 1 && date <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
