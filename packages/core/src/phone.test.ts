import { describe, expect, it } from 'vitest';
import { isE164 } from './phone.ts';

describe('isE164', () => {
  it.each([
    '+12',
    '+15550000001',
    '+48123456789',
    '+123456789012345', // 15 digits, the most E.164 allows
    '+999999999999999',
  ])('accepts %j', (value) => {
    expect(isE164(value)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['+', 'a plus alone'],
    ['+1', 'a single digit'],
    ['+1234567890123456', '16 digits'],
    ['+0123456789', 'a leading zero'],
    ['15550000001', 'no plus'],
    ['0015550000001', 'an international prefix instead of a plus'],
    ['++15550000001', 'two pluses'],
    ['+1 555 000 0001', 'spaces'],
    ['+1-555-000-0001', 'dashes'],
    ['+1(555)0000001', 'parentheses'],
    [' +15550000001', 'a leading space'],
    ['+15550000001 ', 'a trailing space'],
    ['+15550000001\n', 'a trailing newline'],
    ['+1555000000a', 'a letter'],
    ['+１５５５０００', 'full-width digits'],
    ['+١٥٥٥٠٠٠', 'Arabic-Indic digits'],
  ])('refuses %j (%s), normalising nothing', (value) => {
    expect(isE164(value)).toBe(false);
  });
});
