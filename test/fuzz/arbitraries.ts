import fc from 'fast-check';

/**
 * Random and hostile inputs for the route fuzz tests: values, JSON bodies (well-formed, wrongly
 * typed, malformed, deeply nested, prototype-poisoning), query strings, path segments and header
 * values. Each arbitrary mixes plausible values in, so that requests also get past validation.
 */

/** Characters that break naive code: controls, NUL, bidi and zero-width marks, astral symbols, quoting, LIKE and template syntax. */
const TRICKY = [
  '\u0000',
  '\u0001',
  '\b',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00ff',
  '\u200b',
  '\u200d',
  '\u202e',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '😀',
  '👩‍👩‍👧',
  'e\u0301',
  'ß',
  'İ',
  '"',
  "'",
  '\\',
  '`',
  '%',
  '_',
  '*',
  '?',
  '#',
  '&',
  '=',
  '+',
  '/',
  '..',
  ',',
  ';',
  ':',
  '<',
  '>',
  '{{',
  '}}',
  '{{name}}',
  '{{ x }}',
  '$' + '{x}',
  '%s',
  '\\u0000',
  '\r\n',
];

/** What most often breaks storage and parsing: NUL, a lone surrogate, line separators, a BOM. */
const WORST = ['\u0000', '\ud800', '\udfff', '\u2028', '\ufeff', '\u0001'];

const trickyChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...WORST) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);

const SPECIAL_STRINGS = [
  '',
  ' ',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  'NaN',
  'Infinity',
  '1e309',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '+15551234567',
  '+1555123456789012',
  '+0123',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00.000Z',
  '2024-02-30T25:61:61Z',
  "'; DROP TABLE messages; --",
];

/** A string long enough to pass any length limit (up to about 70,000 UTF-16 units). */
const longString: fc.Arbitrary<string> = fc
  .tuple(trickyChar, fc.constantFrom(65, 129, 201, 1_001, 1_601, 20_001, 70_000))
  .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length)));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: trickyChar, maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 1, arbitrary: longString },
);

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 101, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'length', '0', ''];
const hostileKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...KEYS), fc.string({ unit: trickyChar, maxLength: 8 }));

/** An object with own properties only: `__proto__` becomes a key that JSON.stringify writes out. */
function ownObject(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const scalar: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));

/** Any JSON value built of hostile strings, numbers and keys, a few levels deep. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }).map(ownObject),
})).value;

const ABSENT = Symbol('absent');

/** The value once in `oneIn` draws, else null. */
export function rarely<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

/**
 * A plausible value made hostile but of the same type: hostile text inside a string, a hostile
 * string among an array's elements. Such values pass type checks and reach the handlers and the database.
 */
function tainted(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(plausible, hostileString, fc.nat()).map(([value, taint, at]) => {
    if (typeof value === 'string') return value.slice(0, at % (value.length + 1)) + taint + value.slice(at % (value.length + 1));
    if (Array.isArray(value)) return value.toSpliced(at % (value.length + 1), 0, taint);
    return taint;
  });
}

/**
 * Objects shaped like a route's body: all fields plausible, or each absent, plausible, tainted or
 * hostile, sometimes with an extra hostile key. Plausible values keep validation passing so that
 * the handlers run.
 */
export function shaped(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const record = Object.fromEntries(
    Object.entries(fields).map(([key, plausible]) => [
      key,
      fc.oneof(
        { weight: 1, arbitrary: fc.constant(ABSENT) },
        { weight: 12, arbitrary: plausible },
        { weight: 3, arbitrary: tainted(plausible) },
        { weight: 1, arbitrary: hostileValue },
      ),
    ]),
  );
  const extra = rarely(fc.tuple(hostileKey, hostileValue), 6);
  const mixed = fc.tuple(fc.record(record), extra).map(([values, more]) => {
    const entries = Object.entries(values).filter(([, value]) => value !== ABSENT);
    return ownObject(more ? [...entries, more] : entries);
  });
  // Every field plausible half of the time: nested shapes would otherwise rarely be valid as a whole.
  return fc.oneof(fc.record(fields), mixed);
}

const MALFORMED_JSON = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"a":',
  '{"a" 1}',
  "{'a':1}",
  'nul',
  'undefined',
  'NaN',
  '{"a":1,}',
  '[1,]',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\u0000"}',
  '1e999',
  '-1e999',
  '123456789012345678901234567890',
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  '{"a":1}{"b":2}',
  '{"a":1} x',
  '"text"',
  'true',
  'null',
  '0',
  '[]',
  '{}',
  '{"a":1,"a":2}',
  '\u0000',
  '{"x":"\u0001"}',
  '{"x":"\\x41"}',
  '{"x":01}',
  '{"x":.5}',
  '{"x":+1}',
  '{"x":1e}',
  `[${'1,'.repeat(20_000)}1]`,
];

/** JSON text no route accepts: broken syntax, duplicate or poisoning keys, extreme numbers, arbitrary text. */
const malformedJson: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...MALFORMED_JSON) },
  { weight: 1, arbitrary: fc.string({ unit: trickyChar, maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string() },
);

/** Arrays or objects nested thousands of levels deep, up to about half a megabyte. */
const deepJson: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(100, 1_000, 10_000, 100_000), fc.constantFrom('[', '{"a":'))
  .map(([depth, open]) => (open === '[' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${open.repeat(depth)}1${'}'.repeat(depth)}`));

/** A request body's text: mostly the route's plausible shape as JSON, else any JSON, malformed or deep text. */
export function jsonBody(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: plausible.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: hostileValue.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: malformedJson },
    { weight: 1, arbitrary: deepJson },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/json ;',
  'application/json; boundary=";"',
  'application/vnd.api+json',
  'application/json, text/plain',
  'text/plain',
  'text/csv',
  'text/csv; charset=utf-8',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/xml',
  '',
  ';',
  '*/*',
  'application/',
  '/json',
];

/** The Content-Type of a body: mostly JSON; undefined sends none. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** Text a header may carry (visible ASCII, Latin-1 and tabs; Node refuses other characters before sending). */
const headerChar = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)).map((c) => String.fromCharCode(c));
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: headerChar, maxLength: 40 }),
  fc.constantFrom('', ' ', 'x'.repeat(10_000), 'null', '0', '\t', 'ÿ', 'key, other'),
);

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Percent-encodes every byte of the UTF-8 text but unreserved ASCII (a lone surrogate becomes U+FFFD). */
function encode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += byte < 0x80 && UNRESERVED.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Raw URL text no encoder writes: stray or invalid percent escapes, overlong or surrogate UTF-8, NUL, brackets. */
const RAW_URL_JUNK = ['%', '%2', '%zz', '%ED%A0%80', '%FF', '%C0%AF', '%00', '%2F', '%2e%2e', '..', '.', '[]', '%25', '%E2%82', '+'];

export type QueryFields = Record<string, fc.Arbitrary<string>>;

/** A query string (with its `?`, or empty) over the route's parameters: each absent, plausible or hostile, sometimes repeated. */
export function queryString(fields: QueryFields): fc.Arbitrary<string> {
  const pair = (key: string, plausible: fc.Arbitrary<string>) =>
    fc
      .oneof(
        { weight: 12, arbitrary: plausible.map(encode) },
        { weight: 2, arbitrary: tainted(plausible).map((value) => encode(String(value))) },
        { weight: 2, arbitrary: hostileString.map(encode) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_JUNK) },
      )
      .map((value) => `${encode(key)}=${value}`);
  const known = Object.entries(fields).map(([key, plausible]) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constant([]) },
      { weight: 6, arbitrary: fc.tuple(pair(key, plausible)) },
      { weight: 1, arbitrary: fc.tuple(pair(key, plausible), pair(key, plausible)) },
    ),
  );
  const shapedQuery = fc.tuple(...known, rarely(fc.tuple(hostileKey, hostileString), 8)).map((parts) => {
    const extra = parts.pop() as [string, string] | null;
    const pairs = (parts as string[][]).flat();
    if (extra) pairs.push(`${encode(extra[0])}=${encode(extra[1])}`);
    return pairs.join('&');
  });
  const junk = fc.constantFrom(...RAW_URL_JUNK, '&', '=', '==', '&&', 'limit[]=1', 'limit[$gt]=1', '__proto__[x]=1', 'a=1&a=2');
  const raw = fc.array(fc.oneof(junk, fc.string({ maxLength: 4 }).map(encode)), { maxLength: 6 }).map((parts) => parts.join(''));
  return fc
    .oneof({ weight: 12, arbitrary: shapedQuery }, { weight: 1, arbitrary: fc.webQueryParameters() }, { weight: 1, arbitrary: raw })
    .map((query) => (query === '' ? '' : `?${query}`));
}

/** Ids of one kind of entity: the seeded ones and those the fuzz creates (a 201 with an `id`). */
export class IdPool {
  readonly ids: string[];
  constructor(ids: string[] = []) {
    this.ids = [...ids];
  }
  add(id: string): void {
    if (!this.ids.includes(id)) this.ids.push(id);
  }
  /** Counterexamples name the pool, not its ids. */
  [fc.toStringMethod](): string {
    return `IdPool(${this.ids.length})`;
  }
  /** One of the ids at generation time (a replay with the same seed may see more of them); the nil uuid while there is none. */
  arbitrary(): fc.Arbitrary<string> {
    return fc.nat().map((i) => this.ids[i % this.ids.length] ?? '00000000-0000-0000-0000-000000000000');
  }
}

/** A path segment: one of the valid ids (also upper-cased), a random uuid, hostile text (encoded), raw junk or a very long id. */
export function pathId(valid: IdPool | readonly string[]): fc.Arbitrary<string> {
  const others: fc.WeightedArbitrary<string>[] = [
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: hostileString.filter((text) => text.length < 5_000).map(encode) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_JUNK) },
    { weight: 1, arbitrary: fc.tuple(fc.uuid(), fc.nat(4)).map(([id, i]) => [`{${id}}`, id.replaceAll('-', ''), `${id}x`, `%20${id}`, `${id}%00`][i]!) },
    { weight: 1, arbitrary: fc.constantFrom(100, 10_000).map((n) => 'a'.repeat(n)) },
  ];
  const pool = valid instanceof IdPool ? valid : new IdPool([...valid]);
  if (pool.ids.length === 0) return fc.oneof(...others);
  const known = pool.arbitrary();
  return fc.oneof({ weight: 6, arbitrary: known }, { weight: 1, arbitrary: known.map((id) => id.toUpperCase()) }, ...others);
}

// Years Postgres has no room for or reads differently (no year 0), extreme offsets, leap days, nanoseconds.
const EDGE_DATES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59-14:00',
  '1969-12-31T23:59:59.999-23:59',
  '2024-02-29T12:00:00+14:00',
  '2023-02-29T12:00:00Z',
  '2024-01-01T00:00:00.123456789Z',
  '2024-01-01t00:00:00z',
  '2024-01-01 00:00:00Z',
  '2024-01-01T24:00:00Z',
  '2024-06-30T23:59:60Z',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '-000001-01-01T00:00:00Z',
];

/** Mostly the valid value, now and then one of the others (an unknown id, hostile text). */
export function mostly<T>(valid: fc.Arbitrary<T>, ...others: fc.Arbitrary<T>[]): fc.Arbitrary<T> {
  return fc.oneof({ weight: 8 * others.length, arbitrary: valid }, ...others.map((arbitrary) => ({ weight: 1, arbitrary })));
}

/** Plausible values of common fields. */
export const plausible = {
  phone: fc.oneof(
    fc.integer({ min: 2_000_000, max: 9_999_999 }).map((n) => `+1555${n}`),
    fc.constantFrom('+15551234567', '+447700900123'),
  ),
  name: fc.string({ maxLength: 40 }),
  limit: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
    { weight: 1, arbitrary: fc.constantFrom('0', '101', '-1', '1.5', '1e2', '0x10', ' 5', '') },
  ),
  offset: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 50 }).map(String) },
    { weight: 1, arbitrary: fc.constantFrom('2147483647', '2147483648', '-1', '99999999999999999999', '1.0') },
  ),
  isoDate: fc.oneof(
    { weight: 6, arbitrary: fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()) },
    { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) },
    { weight: 2, arbitrary: fc.constantFrom(...EDGE_DATES) },
  ),
};
