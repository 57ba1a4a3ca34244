import { describe, expect, it } from 'vitest';
import { MAX_BODY_CODE_POINTS, codePointLength, storableText } from './text.ts';

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

describe('storableText', () => {
  it.each([
    ['a\u0000b', 'a\ufffdb'],
    ['\ud800', '\ufffd'],
    ['\udfff', '\ufffd'],
    ['a\ud83d', 'a\ufffd'],
    ['\ude00a', '\ufffda'],
    ['\ude00\ud83d', '\ufffd\ufffd'],
    ['\u0000\ud800\u0000', '\ufffd\ufffd\ufffd'],
  ])('replaces NUL and lone surrogates in %j by U+FFFD', (text, stored) => {
    expect(storableText(text)).toBe(stored);
    // Postgres's jsonb refuses the escape JSON.stringify writes for a lone surrogate.
    expect(JSON.stringify(storableText(text))).not.toMatch(/\\u(d[89a-f]|0000)/i);
  });

  it.each(['', 'plain', 'zażółć', '😀', '👨‍👩‍👧', '\ufffd'])('keeps %j as it is', (text) => {
    expect(storableText(text)).toBe(text);
  });
});
