import { describe, expect, it, vi } from 'vitest';
import { uuidOfSid } from '@smsgw/core';
import { createTestUser, uniquePhone as phone, type TestApi, type TestUser } from '@smsgw/api/testing';
import { twilioClient, validateRequest } from '@smsgw/api/testing/twilio';
import { deliveries, report, toSending, webhookTestbed, type Receiver } from '../testing/webhook-fixtures.ts';

/**
 * Twilio's status callbacks in the webhook engine: messages created by the published `twilio`
 * library against a listening smsgw with a `StatusCallback` on loopback, their reports made by the
 * device API, and each callback checked with the library's own `validateRequest`, as an
 * application receiving them would.
 */
const bed = webhookTestbed({ listen: true });
const { receiver, dispatcher } = bed;

interface Account {
  account_sid: string;
  messaging_service_sid: string;
  auth_token: string;
}
const SIM_NUMBER = '+15550001111';

async function twilioUser(api: TestApi): Promise<{ user: TestUser; account: Account }> {
  const user = await createTestUser(api.db);
  await api.db.device.update({ where: { id: user.deviceId! }, data: { simCards: [{ slotIndex: 0, simNumber: 1, phoneNumber: SIM_NUMBER }] } });
  const res = await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': user.apiKey } });
  return { user, account: res.json() as Account };
}

/** Messages created with the library, their StatusCallback at `target` (tagged by `ref`), brought to `sending`; their SIDs. */
async function create(api: TestApi, user: TestUser, account: Account, target: Receiver, count = 1, ref = 'r'): Promise<string[]> {
  const client = twilioClient(bed.baseUrl, account.account_sid, account.auth_token);
  const sids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await client.messages.create({
      to: phone(),
      body: `status ${i}`,
      messagingServiceSid: account.messaging_service_sid,
      statusCallback: `${target.url}?ref=${ref}`,
    });
    sids.push(created.sid);
  }
  await toSending(api, user, sids.map(id));
  return sids;
}

const id = (sid: string) => uuidOfSid('SM', sid)!;

/** A callback as the application reads it: its parameters, and whether the library accepts its signature with `token`. */
function read(target: Receiver, n: number) {
  const r = target.received[n]!;
  const params = Object.fromEntries(new URLSearchParams(r.body));
  const url = `http://127.0.0.1:${target.port}${r.url}`;
  return { params, headers: r.headers, validWith: (token: string) => validateRequest(token, String(r.headers['x-twilio-signature']), url, params) };
}

describe('Twilio status callbacks', () => {
  it("POSTs sent and delivered with Twilio's parameters, each accepted by validateRequest with the Auth Token", async () => {
    const api = bed.api;
    const { user, account } = await twilioUser(api);
    const target = await receiver(() => 200);
    const [sid] = await create(api, user, account, target);
    await dispatcher();

    await report(api, user, 'sent', [id(sid!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(1), { timeout: 15_000 });
    await report(api, user, 'delivered', [id(sid!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(2), { timeout: 15_000 });

    const [sent, delivered] = [read(target, 0), read(target, 1)];
    expect(target.received.every((r) => r.method === 'POST')).toBe(true);
    expect(sent.headers).toMatchObject({ 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1' });
    const to = (await api.db.message.findUniqueOrThrow({ where: { id: id(sid!) } })).to;
    expect(sent.params).toEqual({
      SmsSid: sid,
      SmsStatus: 'sent',
      MessageStatus: 'sent',
      To: to,
      MessagingServiceSid: account.messaging_service_sid,
      MessageSid: sid,
      AccountSid: account.account_sid,
      From: SIM_NUMBER,
      ApiVersion: '2010-04-01',
    });
    expect(delivered.params).toMatchObject({
      MessageSid: sid,
      MessageStatus: 'delivered',
      SmsStatus: 'delivered',
      RawDlrDoneDate: expect.stringMatching(/^\d{10}$/),
    });
    expect([sent.validWith(account.auth_token), delivered.validWith(account.auth_token)]).toEqual([true, true]);
    expect(sent.validWith('0'.repeat(32))).toBe(false);
  });

  it('reports a message never sent as failed with ErrorCode 30008, and a sent one a report said not delivered as undelivered with 30003', async () => {
    const api = bed.api;
    const { user, account } = await twilioUser(api);
    const target = await receiver(() => 200);
    const [neverSent, notDelivered] = await create(api, user, account, target, 2);
    await dispatcher();

    await report(api, user, 'failed', [id(neverSent!)]);
    await report(api, user, 'sent', [id(notDelivered!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(2), { timeout: 15_000 });
    await report(api, user, 'failed', [id(notDelivered!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(3), { timeout: 15_000 });

    const all = target.received.map((_, n) => read(target, n));
    expect(all.every((c) => c.validWith(account.auth_token))).toBe(true);
    const statuses = all.map((c) => [c.params.MessageSid, c.params.MessageStatus, c.params.ErrorCode]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [neverSent, 'failed', '30008'],
        [notDelivered, 'sent', undefined],
        [notDelivered, 'undelivered', '30003'],
      ]),
    );
    // The resource says the same.
    const client = twilioClient(bed.baseUrl, account.account_sid, account.auth_token);
    expect([(await client.messages(neverSent!).fetch()).status, (await client.messages(notDelivered!).fetch()).status]).toEqual(['failed', 'undelivered']);
  });

  it('signs the callbacks sent after an Auth Token rotation with the new token only', async () => {
    const api = bed.api;
    const { user, account } = await twilioUser(api);
    const target = await receiver(() => 200);
    const [sid] = await create(api, user, account, target);
    await dispatcher();

    await report(api, user, 'sent', [id(sid!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(1), { timeout: 15_000 });
    const rotated = await api.app.inject({ method: 'POST', url: '/api/v1/twilio/auth-token', headers: { 'x-api-key': user.apiKey } });
    const fresh = (rotated.json() as Account).auth_token;
    await report(api, user, 'delivered', [id(sid!)]);
    await vi.waitFor(() => expect(target.received).toHaveLength(2), { timeout: 15_000 });

    const [before, after] = [read(target, 0), read(target, 1)];
    expect([before.validWith(account.auth_token), before.validWith(fresh)]).toEqual([true, false]);
    expect([after.validWith(fresh), after.validWith(account.auth_token)]).toEqual([true, false]);
  });

  it('retries a callback whose endpoint answered 500, the same signed request again', async () => {
    const api = bed.api;
    const { user, account } = await twilioUser(api);
    const flaky = await receiver((n) => (n === 1 ? 500 : 200));
    const [sid] = await create(api, user, account, flaky);
    await dispatcher();

    await report(api, user, 'sent', [id(sid!)]);

    await vi.waitFor(
      async () => {
        const [own] = await deliveries(api, { messageId: id(sid!) });
        expect([own?.state, own?.attempts, own?.lastStatusCode]).toEqual(['succeeded', 2, 200]);
      },
      { timeout: 15_000 },
    );
    expect(flaky.received.map((r) => r.body)).toEqual([flaky.received[0]!.body, flaky.received[0]!.body]);
    expect([read(flaky, 0).validWith(account.auth_token), read(flaky, 1).validWith(account.auth_token)]).toEqual([true, true]);
  });
});
