import { describe, expect, it } from 'vitest';
import { MAX_BODY_CODE_POINTS, codePointLength } from './text.ts';

describe('codePointLength', () => {
  it('limits bodies to 1600 code points', () => {
    expect(MAX_BODY_CODE_POINTS).toBe(1600);
  });

  it.each([
    ['', 0],
    ['hello', 5],
    ['zażółć', 6],
    ['😀', 1],
    ['a😀b', 3],
    ['😀'.repeat(1600), 1600],
    // A combining acute accent is a code point of its own.
    ['e\u0301', 2],
    ['\u00e9', 1],
    // A family is three people joined by two zero-width joiners.
    ['👨‍👩‍👧', 5],
    // A flag is two regional indicators.
    ['🇵🇱', 2],
    ['👍🏽', 2],
  ])('counts %j as %i code points', (text, length) => {
    expect(codePointLength(text)).toBe(length);
    expect(codePointLength(text)).toBe([...text].length);
  });

  it('counts lone surrogates as one code point each', () => {
    expect(codePointLength('\ud83d')).toBe(1);
    expect(codePointLength('\ude00')).toBe(1);
    expect(codePointLength('\ude00\ud83d')).toBe(2);
    expect(codePointLength('\ud83da')).toBe(2);
    expect(codePointLength('a\ud83d')).toBe(2);
  });
});
