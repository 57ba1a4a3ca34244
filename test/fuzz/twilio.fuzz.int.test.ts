/**
 * Fuzz of Twilio's Messages API (`/2010-04-01`): create (form-encoded, as the SDKs send, and now and
 * then JSON or junk), fetch, list with its filters and paging, cancel, redact and delete, with the
 * Auth Token, an API key, or hostile Basic credentials, under the caller's Account SID or another:
 * never a 5xx, every 4xx Twilio's `{code, message, more_info, status}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestUser } from '@smsgw/api/testing';
import { IdPool, hostileString, mostly, pathId, plausible, queryString } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import type { FuzzRequest } from './requests.ts';

let api: FuzzApi;
let headers: fc.Arbitrary<Record<string, string>>;
let accountSid: string;
let serviceSid: string;
const sids = new IdPool();

const basic = (login: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` });

beforeAll(async () => {
  // StatusCallback host names resolve to a public address, so that accepted sends store their callback too.
  api = await startFuzzApi({}, { webhookResolver: async () => ['93.184.216.34'] });
  const user = await createTestUser(api.db, { devices: 2 });
  await api.db.device.update({ where: { id: user.deviceId! }, data: { simCards: [{ slotIndex: 0, simNumber: 1, phoneNumber: '+15550009999' }] } });
  const account = (await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': user.apiKey } })).json() as {
    account_sid: string;
    messaging_service_sid: string;
    auth_token: string;
  };
  ({ account_sid: accountSid, messaging_service_sid: serviceSid } = account);
  headers = mostly<Record<string, string>>(
    fc.constantFrom(basic(accountSid, account.auth_token), basic(accountSid, user.apiKey)),
    fc.constantFrom(
      basic(accountSid, ''),
      basic('', account.auth_token),
      basic('AC00000000000000000000000000000000', account.auth_token),
      { authorization: 'Basic ===' },
      {},
    ),
    fc.tuple(hostileString, hostileString).map(([login, password]) => basic(login, password)),
  );
  const seed = await api.app.inject({
    method: 'POST',
    url: `/2010-04-01/Accounts/${accountSid}/Messages.json`,
    headers: { ...basic(accountSid, account.auth_token), 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'To=%2B15550001000&Body=seed',
  });
  if (seed.statusCode !== 201) throw new Error(`seed send: ${seed.statusCode} ${seed.body}`);
  sids.add((seed.json() as { sid: string }).sid);
});
afterAll(async () => {
  await api?.close();
});

const future = fc.integer({ min: -100, max: 40 * 86_400 }).map((s) => new Date(Date.now() + s * 1000).toISOString());
const text = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 60 }) }, { weight: 1, arbitrary: hostileString.filter((t) => t.length < 3000) });
const createFields: Record<string, fc.Arbitrary<string>> = {
  To: mostly(plausible.phone, fc.constantFrom('', '12', '+1', '5551234567'), text),
  Body: mostly(fc.string({ minLength: 1, maxLength: 60 }), fc.constantFrom('', 'x'.repeat(1601), '\u0000', '\uD800'), text),
  From: fc.oneof(fc.constantFrom('+15550009999', '+15550000000'), fc.constant('MG'), text),
  MessagingServiceSid: fc.oneof(fc.constant('MG'), fc.constant('MG00000000000000000000000000000000'), text),
  StatusCallback: fc.oneof(
    fc.constantFrom('https://example.com/cb', 'http://10.0.0.1/x', 'http://127.0.0.1:1/x', 'ftp://x', '', 'https://exa mple.com/'),
    text,
  ),
  ValidityPeriod: fc.oneof(fc.integer({ min: -5, max: 40_000 }).map(String), text),
  SendAt: fc.oneof(future, plausible.isoDate, text),
  ScheduleType: fc.constantFrom('fixed', 'other', ''),
};
// Creates that should mostly be accepted, so that reading, cancelling and deleting meet real messages too.
const plausibleCreate: Record<string, fc.Arbitrary<string>> = {
  To: plausible.phone,
  Body: fc.string({ minLength: 1, maxLength: 60 }),
  MessagingServiceSid: fc.constant('MG'),
  From: fc.constant('+15550009999'),
  SendAt: fc.integer({ min: 1000, max: 86_400 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
  ScheduleType: fc.constant('fixed'),
  StatusCallback: fc.constantFrom('https://example.com/status', 'http://hooks.example/cb?x=%d'),
};
const updateFields: Record<string, fc.Arbitrary<string>> = { Status: fc.constantFrom('canceled', 'sent', ''), Body: fc.oneof(fc.constant(''), text) };

/** A form body of some of the fields (the service SID placeholder filled in), sometimes JSON or junk instead. */
function form(fields: Record<string, fc.Arbitrary<string>>, requiredKeys: string[] = []): fc.Arbitrary<{ type: string | undefined; payload: string }> {
  const entries = fc.record(fields, { requiredKeys }).map((values) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(values)) params.append(key, value === 'MG' ? serviceSid : value);
    return params;
  });
  return fc.oneof(
    { weight: 10, arbitrary: entries.map((p) => ({ type: 'application/x-www-form-urlencoded', payload: p.toString() })) },
    { weight: 1, arbitrary: entries.map((p) => ({ type: 'application/json', payload: JSON.stringify(Object.fromEntries(p)) })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(undefined, 'application/x-www-form-urlencoded', 'text/plain', 'application/json'), hostileString)
        .map(([type, payload]) => ({ type, payload })),
    },
  );
}

function request(
  method: FuzzRequest['method'],
  path: fc.Arbitrary<string>,
  extra: { body?: ReturnType<typeof form>; query?: fc.Arbitrary<string>; creates?: IdPool } = {},
) {
  return fc.record({ path, headers, body: extra.body ?? fc.constant(undefined), query: extra.query ?? fc.constant('') }).map(
    ({ path, headers, body, query }): FuzzRequest => ({
      method,
      url: `${path}${query}`,
      headers: { ...headers, ...(body?.type !== undefined && { 'content-type': body.type }) },
      ...(body && { payload: body.payload }),
      ...(extra.creates && { creates: extra.creates }),
    }),
  );
}

describe('Twilio Messages API under random and hostile input', () => {
  it("answers every request below 500, and every 4xx as Twilio's error body", async () => {
    const account = mostly(fc.constant(accountSid), fc.constant('AC00000000000000000000000000000000'), pathId([]));
    const base = account.map((sid) => `/2010-04-01/Accounts/${sid}`);
    const messagePath = fc.tuple(base, pathId(sids)).map(([b, sid]) => `${b}/Messages/${sid}.json`);
    const listQuery = queryString({
      To: plausible.phone,
      From: fc.constantFrom('+15550009999', '+1'),
      DateSent: plausible.isoDate,
      'DateSent<': plausible.isoDate,
      'DateSent>': plausible.isoDate,
      PageSize: plausible.limit,
      Page: plausible.offset,
      PageToken: fc.oneof(
        pathId(sids).map((s) => `PA${s}`),
        text,
      ),
    });
    const requests = fc.oneof(
      request(
        'POST',
        base.map((b) => `${b}/Messages.json`),
        { body: form(plausibleCreate, ['To', 'Body']), creates: sids },
      ),
      request(
        'POST',
        base.map((b) => `${b}/Messages.json`),
        { body: form({ ...createFields, MediaUrl: fc.constant('https://example.com/a.png') }).map((f) => f), creates: sids },
      ),
      request(
        'GET',
        base.map((b) => `${b}/Messages.json`),
        { query: listQuery },
      ),
      request('GET', messagePath),
      request('POST', messagePath, { body: form(updateFields) }),
      request('DELETE', messagePath),
      ...(['PUT', 'PATCH', 'HEAD', 'OPTIONS'] as const).map((method) =>
        request(
          method,
          fc.oneof(
            messagePath,
            base.map((b) => `${b}/Nowhere.json`),
          ),
        ),
      ),
      request('GET', fc.constantFrom('/2010-04-01', '/2010-04-01/', '/2010-04-01/Accounts', `/2010-04-01/Accounts/x/Calls.json`)),
    );
    await fuzz(api, requests, { numRuns: 400 });
  });
});
