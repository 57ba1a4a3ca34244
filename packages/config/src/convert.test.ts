import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { convertText } from './convert.ts';

const Schema = Type.Object({
  count: Type.Integer(),
  ratio: Type.Optional(Type.Number()),
  label: Type.Optional(Type.String()),
});

describe('convertText', () => {
  it.each([
    ['42', 42],
    ['-7', -7],
    ['007', 7],
  ])('converts the decimal integer %j to %i', (text, number) => {
    expect(convertText(Schema, { count: text })).toEqual({ count: number });
  });

  it.each(['80.5', 'true', '0x50', '1e3', ' 42', '42 ', '+42', 'abc', '4_2', 'Infinity'])(
    'keeps %j as text for an integer, so that the check refuses it',
    (text) => {
      expect(convertText(Schema, { count: text })).toEqual({ count: text });
    },
  );

  it.each([
    ['2.5', 2.5],
    ['-0.25', -0.25],
    ['.5', 0.5],
    ['1e3', 1000],
    ['3', 3],
  ])('converts the decimal number %j to %d', (text, number) => {
    expect(convertText(Schema, { count: '1', ratio: text })).toEqual({ count: 1, ratio: number });
  });

  it.each(['0x10', 'true', 'NaN', '1,5'])('keeps %j as text for a number', (text) => {
    expect(convertText(Schema, { count: '1', ratio: text })).toEqual({ count: 1, ratio: text });
  });

  it('leaves strings and absent properties alone', () => {
    expect(convertText(Schema, { count: '1', label: '007' })).toEqual({ count: 1, label: '007' });
  });
});
