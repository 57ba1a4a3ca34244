/**
 * Fuzz of Kannel's sendsms (`/cgi-bin/sendsms`, GET and POST): never a 5xx, every answer Kannel's
 * one line of text/html (PEER_SHAPES in harness.ts), never smsgw's JSON.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestUser } from '@smsgw/api/testing';
import { headerValue, hostileString, mostly, plausible } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, type FuzzRequest } from './requests.ts';

let api: FuzzApi;
let username: string;
let password: string;
let deviceId: string;

beforeAll(async () => {
  // dlr-url hosts resolve to a public address, so that callbacks are stored too.
  api = await startFuzzApi({}, { webhookResolver: async () => ['93.184.216.34'] });
  const user = await createTestUser(api.db);
  [username, password, deviceId] = [user.user.name, user.apiKey, user.deviceId!];
});
afterAll(async () => {
  await api?.close();
});

const numbers = fc
  .array(
    fc.oneof(
      plausible.phone,
      plausible.phone.map((p) => `00${p.slice(1)}`),
      fc.constantFrom('0301234', '12-34', 'abc', ''),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((list) => list.join(' '));
const small = (values: string[]) => fc.oneof(fc.constantFrom(...values), fc.integer({ min: -3, max: 100 }).map(String));
const fields = {
  to: numbers,
  text: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('x'.repeat(1600), '€'.repeat(400), '\u0000')),
  from: fc.string({ maxLength: 12 }),
  coding: small(['0', '1', '2', 'x']),
  charset: fc.constantFrom('UTF-8', 'ISO-8859-1', 'UTF-16BE', 'windows-1252', 'bogus'),
  'dlr-url': fc.constantFrom('http://dlr.example/r?t=%d&p=%p&P=%P&at=%t', 'https://dlr.example/%A', 'ftp://x', 'http://127.0.0.1/', 'http://'),
  'dlr-mask': small(['1', '31', '66', '67', '-1']),
  smsc: fc.oneof(fc.constant(''), fc.uuid(), hostileString),
  validity: small(['-2', '1440', '999999999']),
  deferred: small(['-2', '60', '999999999']),
  priority: small(['0', '3', '4']),
  mclass: small(['0', '4']),
  udh: fc.constantFrom('%06%05%04%0B%84%23%F0'),
};

describe('Kannel sendsms under random and hostile input', () => {
  it("answers every GET and POST below 500, in Kannel's one line of text/html", async () => {
    const credentials = fc.record({
      username: mostly(fc.constant(username), hostileString),
      password: mostly(fc.constant(password), fc.constant('smsgw_sk_wrong'), hostileString),
    });
    const get = credentials.chain(({ username: u, password: p }) =>
      route({
        method: 'GET',
        path: '/cgi-bin/sendsms',
        query: { ...fields, username: fc.constant(u), password: fc.constant(p), smsc: mostly(fc.constant(''), fc.constant(deviceId), fields.smsc) },
      }),
    );
    const post: fc.Arbitrary<FuzzRequest> = fc
      .record({
        credentials,
        to: mostly(numbers, headerValue),
        type: fc.constantFrom(
          'text/plain',
          'text/plain; charset=ISO-8859-1',
          'text/plain; charset=bogus',
          'application/octet-stream',
          'text/html',
          'application/json',
          '',
        ),
        extra: fc.dictionary(
          fc.constantFrom('x-kannel-coding', 'x-kannel-dlr-mask', 'x-kannel-dlr-url', 'x-kannel-smsc', 'x-kannel-validity', 'x-kannel-from'),
          headerValue,
          { maxKeys: 3 },
        ),
        body: fc.oneof(fc.string({ maxLength: 60 }), hostileString),
        query: fc.constantFrom('', '?to=%2B15551234567', '?text=x&coding=2'),
      })
      .map(({ credentials: c, to, type, extra, body, query }) => ({
        method: 'POST',
        url: `/cgi-bin/sendsms${query}`,
        headers: { 'x-kannel-username': c.username, 'x-kannel-password': c.password, 'x-kannel-to': to, ...extra, ...(type && { 'content-type': type }) },
        payload: body,
      }));
    await fuzz(api, fc.oneof(get, post), { numRuns: 400 });
  });
});
