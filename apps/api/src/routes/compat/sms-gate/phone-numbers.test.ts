import { describe, expect, it } from 'vitest';
import { isKnownRegion, toE164 } from './phone-numbers.ts';

describe('SMS Gate phone numbers', () => {
  it('keeps E.164 numbers and reads other spellings with libphonenumber', () => {
    expect(toE164(['+15551234567', '+49 151 2345 6789'], undefined)).toEqual(['+15551234567', '+4915123456789']);
  });

  it('reads a number without + in PHONE_DEFAULT_REGION', () => {
    expect(toE164(['0151 23456789'], 'DE')).toEqual(['+4915123456789']);
    expect(toE164(['9161234567'], 'RU')).toEqual(['+79161234567']);
  });

  it('refuses a number without + when no region is set, naming the setting', () => {
    expect(() => toE164(['015123456789'], undefined)).toThrow(/PHONE_DEFAULT_REGION/);
  });

  it('refuses a number that is not valid in its region, and text that is not a number', () => {
    expect(() => toE164(['0151'], 'DE')).toThrow(/row 1: invalid phone number/);
    expect(() => toE164(['+1', 'hello'], 'DE')).toThrow(/row 1/);
    expect(() => toE164(['+15551234567', 'hello'], 'DE')).toThrow(/row 2: failed to parse phone number/);
  });

  it('refuses the same number twice, also when spelt two ways', () => {
    expect(() => toE164(['+4915123456789', '0151 23456789'], 'DE')).toThrow('phone numbers must be unique');
  });

  it('knows real regions only', () => {
    expect(isKnownRegion('DE')).toBe(true);
    expect(isKnownRegion('XX')).toBe(false);
  });
});
