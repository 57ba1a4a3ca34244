import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOptOut } from '@smsgw/db';
import { createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi, type TestUser } from '../../../testing/test-api.ts';

/**
 * Twilio's `Messages.json` through inject: what a create stores (device and SIM of `From`,
 * StatusCallback, validity, schedule), and every refusal in Twilio's status and body, changing
 * nothing and charging nothing.
 */
// Host names of StatusCallback URLs resolve to a public address here; 127.0.0.1 stays internal.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.216.34'] });
});
afterAll(async () => {
  await api?.close();
});

interface Account {
  account_sid: string;
  messaging_service_sid: string;
  auth_token: string;
}

async function setUp(devices = 1): Promise<{ u: TestUser; a: Account }> {
  const u = await createTestUser(api.db, { devices });
  const a = (await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': u.apiKey } })).json() as Account;
  return { u, a };
}

const auth = (a: Account) => ({ authorization: `Basic ${Buffer.from(`${a.account_sid}:${a.auth_token}`).toString('base64')}` });
const create = (a: Account, form: Record<string, string>, sid = a.account_sid) =>
  api.app.inject({
    method: 'POST',
    url: `/2010-04-01/Accounts/${sid}/Messages.json`,
    headers: { ...auth(a), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
const twilioError = (status: number, code: number, message: string | RegExp) => ({
  status,
  body: {
    code,
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  },
});

describe('POST /2010-04-01/Accounts/{AccountSid}/Messages.json', () => {
  it("sends From a SIM's phone number with that device and SIM, and stores the validity and StatusCallback as a callback of format twilio", async () => {
    const { u, a } = await setUp(2);
    const second = u.devices[1]!.id;
    await api.db.device.update({
      where: { id: second },
      data: {
        simCards: [
          { slotIndex: 0, simNumber: 1, phoneNumber: '+15550001111' },
          { slotIndex: 1, simNumber: 2, phoneNumber: '+15550002222' },
        ],
      },
    });
    const res = await create(a, { To: phone(), From: '+15550002222', Body: 'from SIM 2', StatusCallback: 'https://example.com/status', ValidityPeriod: '600' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ from: '+15550002222', status: 'queued' });
    const [row] = await api.sql
      .query<{ requested_device_id: string; sim_number: number; valid_until: Date; created_at: Date }>(
        'SELECT requested_device_id, sim_number, valid_until, created_at FROM messages WHERE user_id = $1',
        [u.userId],
      )
      .then((r) => r.rows);
    expect([row!.requested_device_id, row!.sim_number]).toEqual([second, 2]);
    const [message] = await api.db.message.findMany({ where: { userId: u.userId }, include: { callback: true } });
    // From named one SIM: not through the Messaging Service, whose SID the callbacks then leave out.
    expect(message!.callback).toMatchObject({
      url: 'https://example.com/status',
      format: 'twilio',
      events: ['sent', 'delivered', 'undelivered', 'failed'],
      context: { accountSid: a.account_sid },
    });
    expect(row!.valid_until.getTime() - row!.created_at.getTime()).toBeGreaterThanOrEqual(599_000);
    expect(row!.valid_until.getTime() - row!.created_at.getTime()).toBeLessThanOrEqual(601_000);
  });

  const refusals: [string, Record<string, string>, ReturnType<typeof twilioError>][] = [
    ['no To', { Body: 'x' }, twilioError(400, 21604, "A 'To' phone number is required.")],
    ['a To that is not E.164', { To: '555-1234', Body: 'x' }, twilioError(400, 21211, "The 'To' number 555-1234 is not a valid phone number.")],
    ['no Body', { To: '+15551230000' }, twilioError(400, 21602, 'Message body is required.')],
    ['an empty Body', { To: '+15551230000', Body: '' }, twilioError(400, 21602, 'Message body is required.')],
    [
      'a Body over 1600 characters',
      { To: '+15551230000', Body: 'é'.repeat(1601) },
      twilioError(400, 21617, 'The concatenated message body exceeds the 1600 character limit.'),
    ],
    [
      'a From no SIM of the user has',
      { To: '+15551230000', Body: 'x', From: '+15559999999' },
      twilioError(400, 21606, /^The From phone number \+15559999999 is not a valid/),
    ],
    [
      'another Messaging Service SID',
      { To: '+15551230000', Body: 'x', MessagingServiceSid: 'MG00000000000000000000000000000000' },
      twilioError(400, 21701, /is invalid\.$/),
    ],
    ['a MediaUrl', { To: '+15551230000', Body: 'x', MediaUrl: 'https://example.com/a.png' }, twilioError(400, 21620, /^MMS is not supported/)],
    [
      'a SendAt sooner than 15 minutes',
      { To: '+15551230000', Body: 'x', ScheduleType: 'fixed', SendAt: new Date(Date.now() + 600_000).toISOString() },
      twilioError(400, 35111, /^SendAt time must be between 900 seconds/),
    ],
    [
      'a SendAt later than 35 days',
      { To: '+15551230000', Body: 'x', ScheduleType: 'fixed', SendAt: new Date(Date.now() + 36 * 86_400_000).toISOString() },
      twilioError(400, 35111, /^SendAt time must be between/),
    ],
    [
      'a SendAt without ScheduleType=fixed',
      { To: '+15551230000', Body: 'x', SendAt: new Date(Date.now() + 3_600_000).toISOString() },
      twilioError(400, 35114, /ScheduleType must be fixed/),
    ],
    [
      'a SendAt that is no time',
      { To: '+15551230000', Body: 'x', ScheduleType: 'fixed', SendAt: 'soon' },
      twilioError(400, 35114, 'Scheduling does not support this timestamp'),
    ],
    ['a ValidityPeriod over 36000', { To: '+15551230000', Body: 'x', ValidityPeriod: '36001' }, twilioError(400, 21609, /^Invalid ValidityPeriod/)],
    ['a StatusCallback that is no URL', { To: '+15551230000', Body: 'x', StatusCallback: 'not a url' }, twilioError(400, 21609, /^The StatusCallback URL/)],
    [
      'a StatusCallback to an internal address',
      { To: '+15551230000', Body: 'x', StatusCallback: 'http://127.0.0.1/status' },
      twilioError(
        400,
        21609,
        'The StatusCallback URL http://127.0.0.1/status is not a valid URL: The address 127.0.0.1 is a loopback, private or otherwise internal address; webhooks must reach a public address.',
      ),
    ],
  ];
  it.each(refusals)("refuses %s with Twilio's status and code, storing and charging nothing", async (_name, form, expected) => {
    const { u, a } = await setUp();
    const res = await create(a, form);
    expect({ status: res.statusCode, body: res.json() }).toEqual(expected);
    expect(await sendFootprint(api, u.userId)).toEqual({ messages: 0, batches: 0, quotaUsed: 0, jobs: expect.any(Number) });
    expect(await api.db.messageCallback.count({ where: { userId: u.userId } })).toBe(0);
  });

  it('stores the Messaging Service SID with the callback of a send through the service (named, or neither From nor service)', async () => {
    const { u, a } = await setUp();
    for (const form of [{ MessagingServiceSid: a.messaging_service_sid }, {}] as Record<string, string>[]) {
      expect((await create(a, { To: phone(), Body: 'x', StatusCallback: 'https://example.com/s', ...form })).statusCode).toBe(201);
    }
    const callbacks = await api.db.messageCallback.findMany({ where: { userId: u.userId } });
    expect(callbacks.map((c) => c.context)).toEqual([
      { accountSid: a.account_sid, messagingServiceSid: a.messaging_service_sid },
      { accountSid: a.account_sid, messagingServiceSid: a.messaging_service_sid },
    ]);
  });

  it('refuses an opted-out recipient with 21610 and stores nothing', async () => {
    const { u, a } = await setUp();
    const to = phone();
    await addOptOut(api.db, { userId: u.userId, phone: to, now: new Date() });
    const res = await create(a, { To: to, Body: 'x' });
    expect({ status: res.statusCode, body: res.json() }).toEqual(twilioError(400, 21610, 'Attempt to send to unsubscribed recipient'));
    expect((await sendFootprint(api, u.userId)).messages).toBe(0);
  });

  it("answers smsgw's own refusals in Twilio's body: no device available (503), quota (402)", async () => {
    const { u, a } = await setUp(0);
    expect({ status: (await create(a, { To: phone(), Body: 'x' })).statusCode }).toEqual({ status: 503 });
    expect((await create(a, { To: phone(), Body: 'x' })).json()).toMatchObject({ code: 20503, status: 503 });
    expect((await sendFootprint(api, u.userId)).messages).toBe(0);
    const limited = await createTestUser(api.db, { monthlyQuota: 0 });
    const b = (await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': limited.apiKey } })).json() as Account;
    expect((await create(b, { To: phone(), Body: 'x' })).json()).toMatchObject({ code: 20402, status: 402 });
  });

  it("refuses bad credentials with 401 20003 and another account's SID with 404 20404, storing nothing", async () => {
    const [{ u, a }, { a: b }] = [await setUp(), await setUp()];
    const res = await create({ ...a, auth_token: 'wrong' }, { To: phone(), Body: 'x' });
    expect({ status: res.statusCode, body: res.json() }).toEqual(twilioError(401, 20003, 'Authenticate'));
    const other = await create(a, { To: phone(), Body: 'x' }, b.account_sid);
    expect({ status: other.statusCode, body: other.json() }).toEqual(
      twilioError(404, 20404, `The requested resource /2010-04-01/Accounts/${b.account_sid}/Messages.json was not found`),
    );
    expect((await sendFootprint(api, u.userId)).messages).toBe(0);
  });
});

describe('GET /2010-04-01/Accounts/{AccountSid}/Messages.json', () => {
  it('filters by DateSent (that UTC day), DateSent< and DateSent> (on or before, on or after)', async () => {
    const { u, a } = await setUp();
    for (const body of ['a', 'b', 'c']) expect((await create(a, { To: phone(), Body: body })).statusCode).toBe(201);
    const days = ['2026-03-01T10:00:00Z', '2026-03-02T23:59:59Z', '2026-03-04T00:00:00Z'];
    await api.sql.query(
      `UPDATE messages m SET state = 'sent', sent_at = d.at::timestamptz FROM (SELECT unnest($2::text[]) AS body, unnest($3::text[]) AS at) d
      WHERE m.user_id = $1 AND m.body = d.body`,
      [u.userId, ['a', 'b', 'c'], days],
    );
    const list = async (query: string) => {
      const res = await api.app.inject({ method: 'GET', url: `/2010-04-01/Accounts/${a.account_sid}/Messages.json?${query}`, headers: auth(a) });
      expect(res.statusCode).toBe(200);
      return (res.json() as { messages: { body: string; status: string }[] }).messages.map((m) => m.body);
    };
    expect(await list('DateSent=2026-03-02')).toEqual(['b']);
    expect(await list(`DateSent%3C=${encodeURIComponent('2026-03-02T00:00:00Z')}`)).toEqual(['b', 'a']);
    expect(await list('DateSent%3E=2026-03-02')).toEqual(['c', 'b']);
    const bad = await api.app.inject({ method: 'GET', url: `/2010-04-01/Accounts/${a.account_sid}/Messages.json?DateSent=yesterday`, headers: auth(a) });
    expect({ status: bad.statusCode, body: bad.json() }).toEqual(twilioError(400, 20001, 'Invalid DateSent: yesterday'));
  });
});
