import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { contentType, headerValue, hostileValue, jsonBody, mostly, queryString, rarely, type IdPool, type QueryFields } from './arbitraries.ts';

/** Requests of the route fuzz tests, drawn per route from its path, query, body and header arbitraries. */

export type FuzzMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT' | 'HEAD' | 'OPTIONS';

export interface FuzzRequest {
  method: FuzzMethod;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress?: string;
  /** Where the id of what the request creates (a 201 with an `id`) goes, so that later requests use it. */
  creates?: IdPool;
}

export interface RouteSpec {
  method: FuzzMethod;
  /** The path, as text or with random segments. */
  path: string | fc.Arbitrary<string>;
  query?: QueryFields;
  /** The plausible body; a route without one still gets a body now and then. */
  body?: fc.Arbitrary<unknown>;
  /** Headers of every request (credentials), or an arbitrary of them. */
  headers?: Record<string, string> | fc.Arbitrary<Record<string, string>>;
  /** Extra headers, each sometimes sent with a plausible or odd value. */
  optionalHeaders?: Record<string, fc.Arbitrary<string>>;
  creates?: IdPool;
}

// Headers a client may send that no route reads, or that change how the body is read.
const NOISE_HEADERS = [
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'accept',
  'accept-charset',
  'accept-encoding',
  'x-forwarded-for',
  'x-forwarded-proto',
  'forwarded',
  'user-agent',
  'cookie',
  'origin',
  'expect',
  'if-none-match',
  'x-http-method-override',
  'x-request-id',
];
const noiseValue = fc.oneof(headerValue, fc.constantFrom('0', '-1', '99999999999', 'chunked', 'gzip', '100-continue', 'DELETE'));
const noise = rarely(fc.dictionary(fc.constantFrom(...NOISE_HEADERS), noiseValue, { maxKeys: 2 }), 6);

/** Requests to one route: its path, query, body and headers drawn from the spec's arbitraries. */
export function route(spec: RouteSpec): fc.Arbitrary<FuzzRequest> {
  const path = typeof spec.path === 'string' ? fc.constant(spec.path) : spec.path;
  const query = spec.query ? queryString(spec.query) : fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString({}) });
  // fc.option's `freq`: one draw in `freq` is null.
  const body = spec.body ? fc.option(jsonBody(spec.body), { freq: 12 }) : fc.option(jsonBody(fc.constant({})), { freq: 2 });
  const optional = Object.entries(spec.optionalHeaders ?? {}).map(([name, value]) =>
    fc.option(fc.oneof({ weight: 3, arbitrary: value }, { weight: 1, arbitrary: headerValue }), { freq: 2 }).map((v) => (v === null ? {} : { [name]: v })),
  );
  const fixed = spec.headers instanceof fc.Arbitrary ? spec.headers : fc.constant(spec.headers ?? {});
  return fc
    .record({ path, query, body, type: contentType, fixed, optional: fc.tuple(...optional), noise })
    .map(({ path, query, body, type, fixed, optional, noise }) => {
      const headers: Record<string, string> = { ...noise, ...fixed, ...Object.assign({}, ...optional) };
      if (body !== null && type !== undefined) headers['content-type'] = type;
      return { method: spec.method, url: `${path}${query}`, headers, ...(body !== null && { payload: body }), ...(spec.creates && { creates: spec.creates }) };
    });
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 JWT of the claims, signed with the secret: a valid signature over hostile claims. */
function jwt(claims: unknown, secret: string): string {
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

/**
 * A user's credentials: mostly the API key; now and then none, a malformed one, a JWT with
 * `alg: none`, or one signed with the server's secret but with hostile claims.
 */
export function userAuth(apiKey: string, jwtSecret: string): fc.Arbitrary<Record<string, string>> {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const claims = fc.oneof(
    fc.record({ sub: hostileValue, key_id: hostileValue, exp: fc.constant(exp) }),
    fc.record({ sub: fc.uuid(), key_id: fc.uuid(), exp: fc.oneof(fc.constant(exp), hostileValue) }),
    // SMS Gate's scoped tokens: malformed `jti`, `scopes` and `original_scopes` claims.
    fc.record(
      {
        sub: fc.uuid(),
        key_id: fc.uuid(),
        exp: fc.constant(exp),
        jti: fc.oneof(fc.uuid(), hostileValue),
        scopes: fc.oneof(fc.constant(['all:any']), hostileValue),
        original_scopes: hostileValue,
      },
      { requiredKeys: ['sub', 'key_id', 'exp', 'scopes'] },
    ),
    hostileValue,
  );
  return mostly<Record<string, string>>(
    fc.constant({ 'x-api-key': apiKey }),
    fc.constantFrom<Record<string, string>>(
      {},
      { 'x-api-key': '' },
      { 'x-api-key': `${apiKey}x` },
      { authorization: `Bearer ${apiKey}` },
      { authorization: `bearer  ${apiKey} ` },
    ),
    fc.constantFrom<Record<string, string>>(
      { authorization: `Basic ${apiKey}` },
      { authorization: `Bearer ${base64url({ alg: 'none' })}.${base64url({ sub: 'x' })}.` },
    ),
    claims.map((c) => ({ authorization: `Bearer ${jwt(c, jwtSecret)}` })),
    headerValue.map((value) => ({ 'x-api-key': value })),
    headerValue.map((value) => ({ authorization: `Bearer ${value}` })),
  );
}
