import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { parseInstant, sendTiming } from './send-timing.ts';

const NOW = new Date('2026-11-24T09:00:00.000Z');
const CONFIG = { MESSAGE_TTL_SECONDS: 86_400 };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('invalid_request');
    return (error as AppError).message;
  }
  throw new Error('not refused');
}

describe('parseInstant', () => {
  it.each([
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00:00.250+01:00', '2026-12-01T08:00:00.250Z'],
    ['2026-12-01T09:00-05:30', '2026-12-01T14:30:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (value, iso) => {
    expect(parseInstant(value, 'send_at').toISOString()).toBe(iso);
  });

  it.each([
    '2026-12-01T09:00:00',
    '2026-12-01',
    'tomorrow',
    '1764579600',
    '2026-02-30T09:00:00Z',
    '2026-13-01T09:00:00Z',
    '2026-11-24T24:00:00Z',
    '2026-11-24T10:60:00Z',
    '2027-02-29T09:00:00Z',
    '+275760-09-13T00:00:00Z',
    '2026-12-01 09:00:00Z',
    ' 2026-12-01T09:00:00Z',
  ])('refuses %j, naming the field', (value) => {
    expect(refusal(() => parseInstant(value, 'send_at'))).toContain("'send_at'");
  });
});

describe('sendTiming', () => {
  it('is "at once, the service TTL" when nothing is given', () => {
    expect(sendTiming({}, NOW, CONFIG)).toEqual({ sendAt: null, validUntil: null });
  });

  it('counts ttl_seconds from send_at, or from now', () => {
    expect(sendTiming({ send_at: '2026-11-25T09:00:00Z', ttl_seconds: 60 }, NOW, CONFIG)).toEqual({
      sendAt: new Date('2026-11-25T09:00:00Z'),
      validUntil: new Date('2026-11-25T09:01:00Z'),
    });
    expect(sendTiming({ ttl_seconds: 30 }, NOW, CONFIG).validUntil).toEqual(new Date('2026-11-24T09:00:30Z'));
  });

  it('accepts a send_at 366 days ahead and a valid_until after it', () => {
    const sendAt = new Date(NOW.getTime() + 366 * 86_400_000).toISOString();
    const validUntil = new Date(NOW.getTime() + 367 * 86_400_000).toISOString();
    expect(sendTiming({ send_at: sendAt, valid_until: validUntil }, NOW, CONFIG)).toEqual({ sendAt: new Date(sendAt), validUntil: new Date(validUntil) });
  });

  it.each([
    [{ send_at: '2026-11-24T09:00:00Z' }, "'send_at': must be in the future"],
    [{ send_at: '2020-01-01T00:00:00Z' }, "'send_at': must be in the future"],
    [{ send_at: '2027-11-26T09:00:00Z' }, "'send_at': must be at most 366 days ahead"],
    [{ valid_until: '2026-11-24T08:59:59Z' }, "'valid_until': must be in the future"],
    [{ send_at: '2026-11-25T09:00:00Z', valid_until: '2026-11-25T09:00:00Z' }, "'valid_until': must be after send_at"],
    [{ send_at: '2026-11-25T09:00:00Z', valid_until: '2026-11-24T10:00:00Z' }, "'valid_until': must be after send_at"],
    [{ valid_until: '2026-11-25T09:00:00Z', ttl_seconds: 60 }, 'valid_until or ttl_seconds, not both'],
    [{ ttl_seconds: 0 }, "'ttl_seconds'"],
    [{ ttl_seconds: 86_401 }, "'ttl_seconds'"],
    [{ ttl_seconds: 1.5 }, "'ttl_seconds'"],
  ])('refuses %j', (input, message) => {
    expect(refusal(() => sendTiming(input, NOW, CONFIG))).toContain(message);
  });
});
