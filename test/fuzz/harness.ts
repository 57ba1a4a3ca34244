import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, expect } from 'vitest';
import { ERRORS } from '@smsgw/core';
import { startTestApi, type TestApi } from '@smsgw/api/testing';
import type { BuildAppOptions } from '@smsgw/api';
import type { FuzzRequest } from './requests.ts';

/**
 * Runs fast-check properties against the API in process: every response must be below 500, and
 * every 4xx the JSON `{error, message}` of the spec. A failure shows the shrunk request, fast-check's
 * seed and path, and what the server logged about it (its stack included).
 */

/** What the contract looks at in an injected response. */
interface Injected {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  json(): unknown;
}

export interface FuzzApi extends TestApi {
  /** Errors and warnings the server logged, with their stacks, since the last request began. */
  logged: string[];
}

// FUZZ_RUNS_FACTOR scales the runs of every property (a longer soak locally); FUZZ_SEED replays a
// reported failure; FUZZ_STATS=1 prints the statuses each route answered, and why it answered 400.
const RUNS_FACTOR = Number(process.env.FUZZ_RUNS_FACTOR ?? 1);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const STATS = process.env.FUZZ_STATS ? new Map<string, number>() : undefined;
if (STATS)
  afterAll(() =>
    console.log(
      [...STATS]
        .sort()
        .map(([key, count]) => `${key} ${count}`)
        .join('\n'),
    ),
  );

/** The API on a database of its own, with limits out of the way (no 429s, no 402s) and its error log captured. */
export async function startFuzzApi(env: Record<string, string> = {}, options: Pick<BuildAppOptions, 'webhookResolver'> = {}): Promise<FuzzApi> {
  const logged: string[] = [];
  const stream = new Writable({
    write(line: Buffer, _encoding, done) {
      const entry = JSON.parse(line.toString()) as { msg?: string; err?: { stack?: string; message?: string } };
      logged.push(`${entry.msg ?? ''}: ${entry.err?.stack ?? entry.err?.message ?? ''}`);
      done();
    },
  });
  const api = await startTestApi(
    {
      RATE_LIMIT_PER_MINUTE: '100000000',
      DEVICE_RATE_LIMIT_PER_MINUTE: '100000000',
      // Hostile credentials are part of the fuzz: past this many refusals every request would get 429.
      AUTH_FAILURES_PER_MINUTE: '100000000',
      MONTHLY_QUOTA_DEFAULT: '100000000',
      ...env,
    },
    { ...options, logger: { level: 'warn', stream } },
  );
  return Object.assign(api, { logged });
}

/**
 * Routes that speak another gateway's API answer in that peer's shape, not smsgw's JSON (one entry
 * per compatibility API): the reason a response breaks the peer's shape, or undefined.
 */
const PEER_SHAPES: { url: RegExp; methods: string[]; breach: (res: Injected) => string | undefined }[] = [
  {
    // Kannel's sendsms: one line of text/html; 202 only with Kannel's two accepting answers.
    url: /^\/cgi-bin\/sendsms(\?|$)/,
    methods: ['GET', 'POST'],
    breach: (res) => {
      if (res.headers['content-type'] !== 'text/html') return `${res.statusCode} with content-type ${res.headers['content-type']}`;
      if (res.body.includes('\n') || res.body === '') return `${res.statusCode} whose body is not one line`;
      if (res.statusCode < 300 && !['0: Accepted for delivery', '3: Queued for later delivery'].includes(res.body))
        return `${res.statusCode} that is not Kannel's`;
      return undefined;
    },
  },
];

// Spec section 7: a send-template request's template errors are a body with only `message`.
const MESSAGE_ONLY_URL = /^\/+api\/sms\/send-template(\?|$)/;
// SMS Gate's client API (docs/compatibility.md): every error is upstream's `{message}` alone.
const SMS_GATE_URL = /^\/+3rdparty\/v1([/?]|$)/;
// Twilio's Messages API: every error is Twilio's `{code, message, more_info, status}`.
const TWILIO_URL = /^\/+2010-04-01([/?]|$)/;
const TWILIO_KEYS = 'code,message,more_info,status';
// SMS Gate's `GET /logs`: upstream always answers 501, and so does smsgw, on purpose (docs/compatibility.md).
const NOT_SERVED_URL = /^\/+3rdparty\/v1\/logs\/?(\?|$)/;

/**
 * Why a response breaks the contract, or undefined when it keeps it: no 5xx (but SMS Gate's 501 of
 * `/logs`, as upstream's); a 4xx is JSON
 * `{error, message}` whose `error` is a code of the catalogue and whose message carries no stack
 * (on SMS Gate's client API, `{message}` alone; on Kannel's sendsms, its own shape: PEER_SHAPES).
 */
export function contractBreach(request: FuzzRequest, res: Injected): string | undefined {
  if (res.statusCode >= 500 && !(res.statusCode === 501 && NOT_SERVED_URL.test(request.url))) return `status ${res.statusCode}`;
  const peer = PEER_SHAPES.find((shape) => shape.methods.includes(request.method) && shape.url.test(request.url));
  if (peer) return peer.breach(res);
  // A HEAD answer has the headers of the GET and no body.
  if (res.statusCode < 400 || request.method === 'HEAD') return undefined;
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return `${res.statusCode} with content-type ${res.headers['content-type']}`;
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return `${res.statusCode} whose body is not JSON`;
  }
  const { error, message } = (body ?? {}) as { error?: unknown; message?: unknown };
  if (typeof message !== 'string') return `${res.statusCode} whose body has no string message`;
  if (/\n\s+at /.test(message)) return `${res.statusCode} whose message carries a stack`;
  if (error === undefined && res.statusCode === 400 && request.method === 'POST' && MESSAGE_ONLY_URL.test(request.url)) return undefined;
  if (TWILIO_URL.test(request.url)) {
    const twilio = body as { code?: unknown; status?: unknown };
    const shaped = Object.keys(twilio).sort().join(',') === TWILIO_KEYS && Number.isInteger(twilio.code) && twilio.status === res.statusCode;
    return shaped ? undefined : `${res.statusCode} whose body is not Twilio's {code, message, more_info, status}`;
  }
  if (SMS_GATE_URL.test(request.url)) return Object.keys(body as object).length === 1 ? undefined : `${res.statusCode} whose body is not SMS Gate's {message}`;
  if (typeof error !== 'string' || !Object.hasOwn(ERRORS, error)) return `${res.statusCode} whose error is not a code of the catalogue`;
  return undefined;
}

function count(request: FuzzRequest, res: Injected): void {
  if (!STATS) return;
  const path = request.url
    .split('?')[0]!
    .split('/')
    .map((s) => (/^$|^[a-z-]{2,16}$|^v1$/.test(s) ? s : ':x'))
    .join('/');
  const key = `${request.method} ${path} ${res.statusCode}`;
  STATS.set(key, (STATS.get(key) ?? 0) + 1);
  if (res.statusCode !== 400) return;
  const reason = `  ${key} ${res.body
    .replace(/'([^'[]{0,20})[^']*'/g, "'$1'")
    .replace(/: .*/, '')
    .slice(0, 120)}`;
  STATS.set(reason, (STATS.get(reason) ?? 0) + 1);
}

/**
 * Sends the request and throws (for fast-check to shrink and report) when the response breaks the
 * contract; returns its status otherwise.
 */
export async function expectWellFormed(api: FuzzApi, request: FuzzRequest): Promise<number> {
  api.logged.length = 0;
  const res = await api.app.inject({
    method: request.method,
    url: request.url,
    headers: request.headers,
    ...(request.payload !== undefined && { payload: request.payload }),
    ...(request.remoteAddress && { remoteAddress: request.remoteAddress }),
  });
  count(request, res);
  const breach = contractBreach(request, res);
  if (breach) {
    throw new Error(`${request.method} ${request.url.slice(0, 300)} answered ${breach}: ${res.body.slice(0, 500)}\nserver log:\n${api.logged.join('\n')}`);
  }
  if ((res.statusCode === 201 || res.statusCode === 202) && request.creates) {
    // Twilio's resources are named by `sid`.
    const created = res.json() as { id?: string; sid?: string };
    request.creates.add((created.id ?? created.sid)!);
  }
  return res.statusCode;
}

/**
 * Checks `numRuns` requests of the arbitrary. `prepare` finishes a request just before it is sent
 * (a fresh pairing code, a signature over the body). Some must succeed: a fuzz whose every request
 * is refused at the door (by a new limit, a changed credential) would prove nothing.
 */
export async function fuzz(
  api: FuzzApi,
  requests: fc.Arbitrary<FuzzRequest>,
  options: { numRuns: number; prepare?: (request: FuzzRequest) => Promise<FuzzRequest> },
): Promise<void> {
  let succeeded = 0;
  await fc.assert(
    fc.asyncProperty(requests, async (request) => {
      const status = await expectWellFormed(api, options.prepare ? await options.prepare(request) : request);
      if (status < 300) succeeded++;
    }),
    { numRuns: Math.max(1, Math.round(options.numRuns * RUNS_FACTOR)), ...(SEED !== undefined && { seed: SEED }) },
  );
  expect(succeeded, 'requests answered 2xx').toBeGreaterThan(0);
}
