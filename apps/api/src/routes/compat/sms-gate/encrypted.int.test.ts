import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { appDate, SmsGateClient } from '@smsgw/client';
import type { DeviceReport } from '@smsgw/queue';
import { call, createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { decryptAsApp, encryptValue, newerClient, publishedClient } from '../../../testing/sms-gate-client.ts';
import { enrolConnectedPhone, type EnrolledPhone } from '../../../testing/test-phone.ts';
import { reportsOfJob } from '@smsgw/queue';

/**
 * SMS Gate's end-to-end encryption through a listening smsgw: a message the client encrypted is
 * stored and handed to the SMS Gate phone byte for byte, with `isEncrypted`; what needs the plain
 * text is refused with upstream's `{message}`, changing nothing and charging nothing.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

const PASSPHRASE = 'a passphrase only the phone and the client know';
// Few iterations keep the many encryptions of this file fast; the string carries its count, as any.
const encrypt = (plain: string) => encryptValue(PASSPHRASE, plain, 1000);
const bearer = (u: TestUser) => ({ authorization: `Bearer ${u.apiKey}` });
const post = (u: TestUser, payload: object) => api.app.inject({ method: 'POST', url: '/3rdparty/v1/messages', headers: bearer(u), payload });

/** A user with `natives` native devices and, unless `phones` is 0, an SMS Gate phone that made its start-up call. */
async function owner(natives: number, phones = 1): Promise<TestUser & { phones: EnrolledPhone[] }> {
  const u = await createTestUser(api.db, { devices: natives });
  const enrolled: EnrolledPhone[] = [];
  for (let i = 0; i < phones; i++) enrolled.push(await enrolConnectedPhone(api.app, api.db, u.userId));
  return { ...u, phones: enrolled };
}

/** The reports queued for the dispatcher from this phone. */
async function queuedReports(phoneId: string): Promise<DeviceReport[]> {
  const jobs = await api.app.reportsQueue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'paused']);
  return jobs
    .flatMap(reportsOfJob)
    .filter((p) => p.deviceId === phoneId)
    .flatMap((p) => p.reports);
}

describe('encrypted messages', () => {
  it('sends by the published library, stores the ciphertexts as they are and hands them to the SMS Gate phone byte for byte', async () => {
    const u = await owner(1);
    const numbers = [phone(), phone()];
    const text = 'Your code is 424242. Grüße, ünïcödé ✓';
    const [c1, c2, cText] = await Promise.all([encrypt(numbers[0]!), encrypt(numbers[1]!), encrypt(text)]);
    // The served library's Message type predates `isEncrypted`; it sends the request as given.
    const request = { id: null, message: cText, phoneNumbers: [c1!, c2!], ttl: null, simNumber: null, withDeliveryReport: null, isEncrypted: true };
    const sent = await publishedClient(baseUrl, u.user.name, u.apiKey).send(request);
    expect(sent).toMatchObject({
      state: 'Pending',
      isEncrypted: true,
      recipients: [
        { phoneNumber: c1, state: 'Pending' },
        { phoneNumber: c2, state: 'Pending' },
      ],
    });

    const rows = await api.db.message.findMany({ where: { userId: u.userId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    expect(rows.map((r) => ({ to: r.to, body: r.body, encrypted: r.isEncrypted, segments: r.segments }))).toEqual(
      [c1, c2].map((to) => ({ to, body: cText, encrypted: true, segments: 1 })),
    );
    expect((await sendFootprint(api, u.userId)).quotaUsed).toBe(2);

    const device = u.phones[0]!;
    await assignMessages(api.sql, { assignments: rows.map((r) => ({ id: r.id, deviceId: device.id })), now: new Date() });
    const phoneClient = new SmsGateClient(`${baseUrl}/mobile/v1`, { token: device.token });
    const items = await phoneClient.pull('fifo');
    expect(items.map((i) => ({ id: i.id, phoneNumbers: i.phoneNumbers, textMessage: i.textMessage, message: i.message, isEncrypted: i.isEncrypted }))).toEqual(
      rows.map((r) => ({ id: r.id, phoneNumbers: [r.to], textMessage: { text: cText }, message: cText, isEncrypted: true })),
    );
    // What the phone does before sending: it decrypts with its passphrase.
    expect(items.map((i) => [decryptAsApp(PASSPHRASE, i.phoneNumbers[0]!), decryptAsApp(PASSPHRASE, i.textMessage!.text)])).toEqual(
      numbers.map((n) => [n, text]),
    );

    // The app reports each recipient by the string it was given.
    const at = appDate(new Date(), '+03:00');
    for (const item of items) {
      await phoneClient.patchMessages([
        { id: item.id, state: 'Sent', recipients: [{ phoneNumber: item.phoneNumbers[0]!, state: 'Sent' }], states: { Sent: at } },
      ]);
    }
    expect((await queuedReports(device.id)).map((r) => [r.id, r.status]).sort()).toEqual(rows.map((r) => [r.id, 'sent']).sort());
  });

  it("answers the state, the list and smsgw's own API with the ciphertexts unchanged and isEncrypted", async () => {
    const u = await owner(0);
    const [c, cText] = await Promise.all([encrypt(phone()), encrypt('secret')]);
    expect((await post(u, { id: 'enc-1', textMessage: { text: cText }, phoneNumbers: [c], isEncrypted: true })).statusCode).toBe(202);
    expect((await post(u, { id: 'plain-1', textMessage: { text: 'plain' }, phoneNumbers: [phone()] })).statusCode).toBe(202);

    const client = newerClient(baseUrl, '', u.apiKey);
    expect(await client.getState('enc-1')).toMatchObject({ id: 'enc-1', isEncrypted: true, recipients: [{ phoneNumber: c }], textMessage: { text: cText } });
    const listed = (await (await client.listMessages({ includeContent: true })).json()) as { id: string; isEncrypted: boolean }[];
    expect(listed.map((m) => [m.id, m.isEncrypted])).toEqual([
      ['plain-1', false],
      ['enc-1', true],
    ]);

    const row = await api.db.message.findFirstOrThrow({ where: { userId: u.userId, isEncrypted: true } });
    expect((await call(api.app, u.apiKey, 'GET', `/api/v1/sms/${row.id}`)).json()).toMatchObject({ to: c });
  });

  it('skips the opt-out list: a ciphertext names no number smsgw could look up', async () => {
    const u = await owner(0);
    const stopped = phone();
    expect((await call(api.app, u.apiKey, 'POST', '/api/v1/opt-outs', { phone: stopped })).statusCode).toBe(201);
    const res = await post(u, { textMessage: { text: await encrypt('hi') }, phoneNumbers: [await encrypt(stopped)], isEncrypted: true });
    expect(res.json()).toMatchObject({ state: 'Pending', recipients: [{ state: 'Pending' }] });
  });

  it('waits for an SMS Gate phone like any message: 503 while none is available now, accepted when scheduled', async () => {
    const u = await owner(1);
    await api.db.device.update({ where: { id: u.phones[0]!.id }, data: { lastSeenAt: new Date(0) } });
    const body = { textMessage: { text: await encrypt('x') }, phoneNumbers: [await encrypt(phone())], isEncrypted: true };
    const now = await post(u, body);
    expect({ status: now.statusCode, body: now.json() }).toEqual({ status: 503, body: { message: 'No devices available to send messages' } });
    const later = await post(u, { ...body, scheduleAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(later.statusCode).toBe(202);
  });

  it('sends with the SMS Gate phone named in deviceId', async () => {
    const u = await owner(1);
    const res = await post(u, {
      deviceId: u.phones[0]!.id,
      textMessage: { text: await encrypt('x') },
      phoneNumbers: [await encrypt(phone())],
      isEncrypted: true,
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().deviceId).toBe(u.phones[0]!.id);
  });

  const valid = '$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdHNhbHRzYWx0c2FsdA==$Y2lwaGVydGV4dGNpcGhlcg==';
  const refusals: [string, (u: TestUser & { phones: EnrolledPhone[] }) => object, RegExp][] = [
    ['a plain text', () => ({ textMessage: { text: 'hello' }, phoneNumbers: [valid] }), /^textMessage.text: not an SMS Gate ciphertext/],
    ['a plain number', () => ({ message: valid, phoneNumbers: [phone()] }), /^failed to use phone in row 1: not an SMS Gate ciphertext/],
    [
      'a malformed ciphertext',
      () => ({ message: valid, phoneNumbers: [valid, '$aes-256-cbc/pbkdf2-sha1$i=x$c2FsdA==$Y2lwaGVy'] }),
      /row 2: not an SMS Gate ciphertext/,
    ],
    ['the same ciphertext twice', () => ({ message: valid, phoneNumbers: [valid, valid] }), /^phone numbers must be unique$/],
    [
      'a named native device',
      (u) => ({ message: valid, phoneNumbers: [valid], deviceId: u.deviceId }),
      /^Device .* is not an SMS Gate phone: only SMS Gate phones can send encrypted messages\.$/,
    ],
  ];
  it.each(refusals)('refuses %s with 400 {message}, storing and charging nothing', async (_name, body, message) => {
    const u = await owner(1);
    const before = await sendFootprint(api, u.userId);
    const res = await post(u, { ...body(u), isEncrypted: true });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json())).toEqual(['message']);
    expect(res.json().message).toMatch(message);
    expect(await sendFootprint(api, u.userId)).toEqual(before);
  });

  it('refuses a user with only native devices (available or not, now or scheduled) with 400, storing and charging nothing', async () => {
    const u = await owner(2, 0);
    const body = { message: valid, phoneNumbers: [valid], isEncrypted: true };
    const before = await sendFootprint(api, u.userId);
    for (const extra of [{}, { scheduleAt: new Date(Date.now() + 3_600_000).toISOString() }]) {
      const res = await post(u, { ...body, ...extra });
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 400,
        body: { message: 'You have no SMS Gate phone: only SMS Gate phones can send encrypted messages.' },
      });
    }
    expect(await sendFootprint(api, u.userId)).toEqual(before);
    // The same message unencrypted goes to the native devices.
    expect((await post(u, { message: 'plain', phoneNumbers: [phone()] })).statusCode).toBe(202);
  });
});
