import { describe, expect, it } from 'vitest';
import { parseDeviceDate } from './device-date.ts';

const FALLBACK = new Date('2030-01-01T00:00:00.000Z');

describe('parseDeviceDate', () => {
  it.each([
    ['2026-07-01T14:03:05.123+03:00', '2026-07-01T11:03:05.123Z'],
    ['2026-07-01T14:03:05.123-05:30', '2026-07-01T19:33:05.123Z'],
    ['2026-07-01T11:03:05.123Z', '2026-07-01T11:03:05.123Z'],
    ['2026-07-01T14:03:05.123+0300', '2026-07-01T11:03:05.123Z'],
    ['2026-07-01T11:03:05.123+0000', '2026-07-01T11:03:05.123Z'],
    ['2026-07-01T14:03:05+03', '2026-07-01T11:03:05.000Z'],
    ['2026-07-01T14:03:05.123456789+03:00', '2026-07-01T11:03:05.123Z'],
    ['2026-07-01T14:03+03:00', '2026-07-01T11:03:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseDeviceDate(text, FALLBACK).toISOString()).toBe(iso);
  });

  it.each([
    ['a malformed offset', '2026-07-01T14:03:05.123+-5:00'],
    ['no offset (local time of an unknown zone)', '2026-07-01T14:03:05.123'],
    ['an impossible day', '2026-02-31T14:03:05.123Z'],
    ['words', 'yesterday'],
    ['an empty string', ''],
  ])('falls back for %s', (_, text) => {
    expect(parseDeviceDate(text, FALLBACK)).toBe(FALLBACK);
  });

  it.each([null, undefined, 1700000000, {}])('falls back for a non-string (%j)', (value) => {
    expect(parseDeviceDate(value, FALLBACK)).toBe(FALLBACK);
  });
});
