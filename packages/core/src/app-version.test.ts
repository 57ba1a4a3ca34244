import { describe, expect, it } from 'vitest';
import { appVersionAtLeast } from './app-version.ts';

describe('appVersionAtLeast', () => {
  it.each([
    ['1.67.0', true],
    ['1.67', true],
    ['1.68.0', true],
    ['1.67.1-insecure', true],
    ['2.0.0', true],
    ['1.100.0', true],
    ['1.66.9', false],
    ['1.6.70', false],
    ['0.99', false],
    ['', false],
    ['beta', false],
    [null, false],
    [undefined, false],
  ] as const)('%j is 1.67 or later: %s', (version, expected) => {
    expect(appVersionAtLeast(version, '1.67')).toBe(expected);
  });
});
