import { AppError } from './errors.ts';

/**
 * When a send may go out and until when (decisions.md, "Scheduled sends and validity"): `send_at`
 * holds every message back until then; `valid_until` or `ttl_seconds` fails a message that no device
 * took in time. Checked at acceptance: a refused request changes nothing.
 */
export interface SendTimingInput {
  send_at?: string | undefined;
  valid_until?: string | undefined;
  ttl_seconds?: number | undefined;
}

export interface SendTiming {
  sendAt: Date | null;
  validUntil: Date | null;
}

/** How far ahead a send may be scheduled. */
export const MAX_SCHEDULE_DAYS = 366;

// ISO 8601 with a date, a time and an offset: a time without an offset has no meaning for a server.
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

function invalid(field: string, why: string): AppError {
  return new AppError('invalid_request', `Invalid field '${field}': ${why}`);
}

/** The instant of an ISO 8601 date-time with an offset; refuses dates that do not exist (2026-02-30, 24:00). */
export function parseInstant(value: string, field: string): Date {
  const m = ISO_WITH_OFFSET.exec(value);
  if (!m) throw invalid(field, 'give an ISO 8601 date and time with an offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T09:00:00+01:00.');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((part) => Number(part ?? 0)) as number[];
  const [offsetHours, offsetMinutes] = [Number(m[8] ?? 0), Number(m[9] ?? 0)];
  const calendar = new Date(Date.UTC(year!, month! - 1, day!));
  const exists = calendar.getUTCFullYear() === year && calendar.getUTCMonth() === month! - 1 && calendar.getUTCDate() === day;
  if (!exists || hour! > 23 || minute! > 59 || second! > 59 || offsetHours > 23 || offsetMinutes > 59) {
    throw invalid(field, `${value} is not a date and time that exists.`);
  }
  return new Date(value);
}

/** The timing of a send, checked against `now`; undefined fields mean "at once" and "the service's TTL". */
export function sendTiming(input: SendTimingInput, now: Date, config: { MESSAGE_TTL_SECONDS: number }): SendTiming {
  const sendAt = input.send_at === undefined ? null : parseInstant(input.send_at, 'send_at');
  if (sendAt) {
    if (sendAt <= now) throw invalid('send_at', 'must be in the future.');
    if (sendAt.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * 86_400_000) throw invalid('send_at', `must be at most ${MAX_SCHEDULE_DAYS} days ahead.`);
  }
  if (input.valid_until !== undefined && input.ttl_seconds !== undefined) {
    throw new AppError('invalid_request', 'Give valid_until or ttl_seconds, not both.');
  }
  const start = sendAt ?? now;
  if (input.ttl_seconds !== undefined) {
    const ttl = input.ttl_seconds;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > config.MESSAGE_TTL_SECONDS) {
      throw invalid('ttl_seconds', `must be a whole number of seconds from 1 to ${config.MESSAGE_TTL_SECONDS}.`);
    }
    return { sendAt, validUntil: new Date(start.getTime() + ttl * 1000) };
  }
  if (input.valid_until === undefined) return { sendAt, validUntil: null };
  const validUntil = parseInstant(input.valid_until, 'valid_until');
  if (validUntil <= now) throw invalid('valid_until', 'must be in the future.');
  if (sendAt && validUntil <= sendAt) throw invalid('valid_until', 'must be after send_at.');
  return { sendAt, validUntil };
}
