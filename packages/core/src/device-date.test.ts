import { describe, expect, it } from 'vitest';
import { parseDeviceDate, readInstant, withoutLeapSecond } from './device-date.ts';

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
    ['an instant in year 10000', '9999-12-31T23:59:59.999-23:59'],
    ['an instant before year 0', '0000-01-01T00:00:00+01:00'],
    ['an instant in year 0, which Postgres does not have', '0000-06-01T00:00:00Z'],
  ])('falls back for %s', (_, text) => {
    expect(parseDeviceDate(text, FALLBACK)).toBe(FALLBACK);
  });

  it.each([null, undefined, 1700000000, {}])('falls back for a non-string (%j)', (value) => {
    expect(parseDeviceDate(value, FALLBACK)).toBe(FALLBACK);
  });
});

describe('withoutLeapSecond', () => {
  it.each([
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31T23:59:60.5Z', '2016-12-31T23:59:59.999Z'],
    ['2017-01-01T00:59:60+01:00', '2017-01-01T00:59:59.999+01:00'],
    ['2016-12-31t23:59:60z', '2016-12-31t23:59:59.999z'],
  ])('reads the leap second %s as %s, which Date can parse', (text, readable) => {
    expect(withoutLeapSecond(text)).toBe(readable);
    expect(Number.isNaN(Date.parse(readable))).toBe(false);
  });

  it.each(['2026-07-01T11:03:05.123Z', '2026-07-01T14:03:05+03:00', '2026-07-01T11:60:05Z', 'text :60Z'])('keeps %s as it is', (text) => {
    expect(withoutLeapSecond(text)).toBe(text);
  });
});

describe('readInstant', () => {
  it.each([
    ['2026-07-01T14:03:05.123+03:00', '2026-07-01T11:03:05.123Z'],
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['2026-07-01t11:03:05z', '2026-07-01T11:03:05.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(readInstant(text)?.toISOString()).toBe(iso);
  });

  it.each([
    ['year 0, which Postgres does not have', '0000-01-01T00:00:00Z'],
    ['year 10000', '9999-12-31T23:59:59-01:00'],
    ['an RFC 9557 zone suffix, which Date cannot read', '2026-07-01T11:03:05Z[Europe/Paris]'],
    ['words', 'yesterday'],
  ])('reads nothing from %s', (_, text) => {
    expect(readInstant(text)).toBeUndefined();
  });
});
