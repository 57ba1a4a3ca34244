import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { findNul, queryNames, validatorCompiler, lenientValidatorCompiler } from './validation.ts';
import { describeValidation } from './errors.ts';

describe('findNul', () => {
  it.each([
    ['a clean body', { name: 'Ada', tags: ['a', { b: 'c' }], n: 1, ok: true, none: null }, undefined],
    ['a top-level string', 'a\u0000b', { path: '', inName: false }],
    ['a nested array element', { recipients: ['+1555', 'x\u0000'] }, { path: '/recipients/1', inName: false }],
    ['a deep object value', { a: [{ b: { c: '\u0000' } }] }, { path: '/a/0/b/c', inName: false }],
    ['a property name', { variables: { 'x\u0000': 'y' } }, { path: '/variables', inName: true }],
  ])('finds it in %s', (_, value, expected) => {
    expect(findNul(value)).toEqual(expected);
  });

  it('walks a body nested deeper than the call stack without overflowing', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findNul(deep)?.inName).toBe(false);
  });
});

describe('queryNames', () => {
  const Page = Type.Object({ limit: Type.Integer(), offset: Type.Integer() });
  it('reads the parameters of one flat object', () => {
    expect([...queryNames(Page as unknown as Record<string, unknown>, 'GET /x')]).toEqual(['limit', 'offset']);
  });

  it.each([
    ['an intersect, whose integers would not be checked as such', Type.Intersect([Page, Type.Object({ name: Type.Optional(Type.String()) })])],
    ['an object that allows others', Type.Object({ a: Type.String() }, { additionalProperties: true })],
    ['a record', Type.Record(Type.String(), Type.String())],
  ])('refuses %s when the route is registered', (_, schema) => {
    expect(() => queryNames(schema as unknown as Record<string, unknown>, 'GET /x')).toThrow(/^GET \/x: a query schema is one Type.Object/);
    expect(() => validatorCompiler({ schema, httpPart: 'querystring', method: 'GET', url: '/x' })).toThrow(/query schema/);
    expect(() => lenientValidatorCompiler({ schema, httpPart: 'querystring', method: 'GET', url: '/x' })).toThrow(/query schema/);
  });
});

describe('the validator compilers', () => {
  const Query = Type.Object({ limit: Type.Integer({ default: 20 }) });
  const strict = validatorCompiler({ schema: Query, httpPart: 'querystring', method: 'GET', url: '/x' }) as (v: unknown) => {
    value?: unknown;
    error?: never[];
  };
  const lenient = lenientValidatorCompiler({ schema: Query, httpPart: 'querystring', method: 'GET', url: '/x' }) as typeof strict;

  it('refuses an unknown query parameter by name, and converts known ones', () => {
    expect(describeValidation(strict({ limit: '5', foo: '1' }).error!, 'querystring')).toBe("Unknown query parameter 'foo'.");
    expect(strict({ limit: '5' })).toEqual({ value: { limit: 5 } });
  });

  it('lets the device protocols send parameters it does not name, and NUL in their text', () => {
    expect(lenient({ limit: '5', order: 'fifo' }).value).toMatchObject({ limit: 5 });
    const body = lenientValidatorCompiler({ schema: Type.Object({ error: Type.String() }), httpPart: 'body', method: 'POST', url: '/x' }) as typeof strict;
    expect(body({ error: 'a\u0000b' })).toEqual({ value: { error: 'a\u0000b' } });
  });

  it('names the field that holds NUL', () => {
    const body = validatorCompiler({
      schema: Type.Object({ items: Type.Array(Type.Object({ name: Type.String() })) }),
      httpPart: 'body',
      method: 'POST',
      url: '/x',
    }) as typeof strict;
    expect(describeValidation(body({ items: [{ name: 'ok' }, { name: '\u0000' }] }).error!, 'body')).toBe(
      "Invalid field 'items[1].name': must not contain a NUL character (U+0000).",
    );
  });
});
