import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { twilio } from '@smsgw/api/testing/twilio';
import { appDate, SmsGateClient } from '@smsgw/client';
import { createDevice, createPairing, type Db } from '@smsgw/db';
import type { Cluster } from '../support/cluster.ts';
import { e2eForAll } from '../support/e2e-fixture.ts';

/**
 * Twilio's incoming SMS through the real processes (issue 25, B.4): the API, a dispatcher, a native
 * simulated device and a simulated SMS Gate phone. Each received SMS is POSTed to the device's (or
 * SIM's) Twilio URL, where a receiver checks it with the twilio library's `validateRequest` and
 * answers TwiML written by its `MessagingResponse`; the replies go out through the same device,
 * each once, as the simulators' sent log shows.
 */
interface Arrival {
  path: string;
  params: Record<string, string>;
  valid: boolean;
}
type Answer = (attempt: number) => { status: number; body: string };

let db: Db;
let logDir: string;
let cluster: Cluster;
let base = '';
let userId = '';
let apiKey = '';
let authToken = '';
let accountSid = '';
let nativeDevice = { id: '', token: '' };
let phoneId = '';
let stateDir = '';
const arrivals: Arrival[] = [];
// What each path answers, by the number of the request to it (1 first).
const answers = new Map<string, Answer>();

const twiml = (...replies: { to?: string; body: string }[]) => {
  const response = new twilio.twiml.MessagingResponse();
  for (const reply of replies) response.message(reply.to ? { to: reply.to } : {}, reply.body);
  return { status: 200, body: response.toString() };
};
const WAIT = { timeout: 30_000, interval: 200 };
const phone = (n: number) => `+1555${String(n).padStart(7, '0')}`;

e2eForAll('twilio-in', async (e2e) => {
  ({ db, logDir } = e2e);
  const { user, key } = await e2e.user('twilio-incoming');
  userId = user.id;
  apiKey = key;
  const native = await createDevice(db, { userId, name: 'native' });
  nativeDevice = { id: native.device.id, token: native.token };
  const pairing = await createPairing(db, { userId, name: 'phone', ttlSeconds: 600 });

  base = await e2e.listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const valid = twilio.validateRequest(authToken, String(req.headers['x-twilio-signature']), `${base}${path}`, params);
      arrivals.push({ path, params, valid });
      const answer = (answers.get(path) ?? (() => ({ status: 200, body: '' })))(arrivals.filter((a) => a.path === path).length);
      res.writeHead(answer.status, { 'content-type': 'text/xml' }).end(answer.body);
    });
  });

  stateDir = join(logDir, 'phone-state');
  cluster = await e2e.startCluster({
    dispatchers: 1,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.5,0.5,0.5', DEVICE_HEARTBEAT_SECONDS: '1' },
    simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1', SIM_STATE_DIR: stateDir },
    deviceTokens: [native.token],
    pairings: [pairing.code],
  });
  const account = (await (await fetch(`${cluster.baseUrl}/api/v1/twilio`, { headers: { 'x-api-key': apiKey } })).json()) as {
    account_sid: string;
    auth_token: string;
  };
  [accountSid, authToken] = [account.account_sid, account.auth_token];
  await vi.waitFor(async () => expect(await db.device.count({ where: { userId } })).toBe(2), WAIT);
  phoneId = (await db.device.findFirstOrThrow({ where: { userId, protocol: 'sms_gate' } })).id;
});

async function patchDevice(id: string, body: unknown) {
  const res = await fetch(`${cluster.baseUrl}/api/v1/devices/${id}`, {
    method: 'PATCH',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** An SMS reaches the native device, which posts it as its inbound SMS (as the simulator and the modem agent do). */
async function nativeReceives(from: string, text: string, id = randomUUID()) {
  const res = await fetch(`${cluster.baseUrl}/api/v1/device/inbound`, {
    method: 'POST',
    headers: { authorization: `Bearer ${nativeDevice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ id, from, message: text, received_at: new Date().toISOString() }] }),
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { stored: number };
}

/** An SMS reaches the SMS Gate phone on `simNumber`, which forwards it through its signed sms:received webhook. */
async function phoneReceives(from: string, text: string, simNumber: number) {
  const registration = JSON.parse(await readFile(join(stateDir, '0.json'), 'utf8')) as { token: string };
  const app = new SmsGateClient(`${cluster.baseUrl}/mobile/v1`, { token: registration.token });
  const signingKey = (await app.settings()).webhooks!.signing_key!;
  const hook = (await app.webhooks()).find((w) => w.event === 'sms:received')!;
  const receivedAt = appDate(new Date(), '+00:00');
  await app.postWebhook(hook.url, signingKey, {
    id: randomBytes(10).toString('hex'),
    webhookId: hook.id,
    event: 'sms:received',
    deviceId: phoneId,
    payload: {
      messageId: createHash('sha256').update(`${from}${text}${receivedAt}`).digest('hex').slice(0, 8),
      message: text,
      sender: from,
      simNumber,
      receivedAt,
      phoneNumber: from,
    },
  });
}

async function sentLog(): Promise<{ id: string; to: string; sim: number }[]> {
  const text = await readFile(join(logDir, 'sent.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; to: string; sim: number });
}

/** The replies stored for `to`, once each has reached a final state. */
async function repliesTo(to: string, count: number) {
  await vi.waitFor(async () => {
    expect(await db.message.count({ where: { userId, to, state: { in: ['delivered', 'failed'] } } })).toBe(count);
  }, WAIT);
  return db.message.findMany({
    where: { userId, to },
    orderBy: { createdAt: 'asc' },
    select: { id: true, body: true, deviceId: true, state: true, simNumber: true },
  });
}

const twilioDeliveries = (receivedId: string) => db.webhookDelivery.findMany({ where: { messageId: receivedId, callbackId: { not: null } } });
const receivedFrom = async (from: string) => db.receivedMessage.findFirstOrThrow({ where: { userId, from } });

describe('Twilio incoming SMS, end to end', () => {
  it("POSTs a native device's SMS signed, retries a failed answer with the same MessageSid, and sends the TwiML reply through that device once", async () => {
    await patchDevice(nativeDevice.id, { twilio_sms_url: `${base}/native` });
    answers.set('/native', (attempt) => (attempt === 1 ? { status: 500, body: 'busy' } : twiml({ body: 'Thanks, we got it' })));
    const sender = phone(1_000_001);
    const id = randomUUID();
    expect((await nativeReceives(sender, 'Hello shop', id)).stored).toBe(1);
    // The device repeats the SMS: nothing more is stored, no second POST is written.
    expect((await nativeReceives(sender, 'Hello shop', id)).stored).toBe(0);

    const [reply] = await repliesTo(sender, 1);
    expect(reply).toMatchObject({ body: 'Thanks, we got it', deviceId: nativeDevice.id, state: 'delivered' });
    const posts = arrivals.filter((a) => a.path === '/native');
    expect(posts).toHaveLength(2);
    expect(posts.every((p) => p.valid)).toBe(true);
    const received = await receivedFrom(sender);
    expect(posts[0]!.params).toEqual({
      MessageSid: `SM${received.id.replaceAll('-', '')}`,
      SmsSid: `SM${received.id.replaceAll('-', '')}`,
      SmsMessageSid: `SM${received.id.replaceAll('-', '')}`,
      AccountSid: accountSid,
      MessagingServiceSid: expect.stringMatching(/^MG[0-9a-f]{32}$/),
      From: sender,
      To: nativeDevice.id,
      Body: 'Hello shop',
      NumMedia: '0',
      NumSegments: '1',
      SmsStatus: 'received',
      ApiVersion: '2010-04-01',
    });
    expect(posts[1]!.params).toEqual(posts[0]!.params);
    expect((await sentLog()).filter((s) => s.to === sender)).toEqual([expect.objectContaining({ id: reply!.id })]);
    expect(await twilioDeliveries(received.id)).toMatchObject([{ state: 'succeeded', attempts: 2, lastStatusCode: 200, lastError: null }]);
  }, 60_000);

  it("on an SMS Gate phone, the SIM's URL wins over the device's; To is the SIM's number; <Response/> sends nothing; several <Message>s and to= each go once", async () => {
    // As a dual-SIM phone's app reports them (the simulated phone reports one SIM).
    await db.device.update({
      where: { id: phoneId },
      data: {
        simCards: [
          { slotIndex: 0, simNumber: 1, phoneNumber: '+15550000001' },
          { slotIndex: 1, simNumber: 2 },
        ],
      },
    });
    await patchDevice(phoneId, { twilio_sms_url: `${base}/phone`, sims: [{ sim_number: 2, twilio_sms_url: `${base}/sim2` }] });
    const forwarded = phone(1_000_099);
    answers.set('/phone', () => ({ status: 200, body: new twilio.twiml.MessagingResponse().toString() }));
    answers.set('/sim2', () => twiml({ body: 'first' }, { body: 'second' }, { to: forwarded, body: 'forwarded' }));

    const onSim1 = phone(1_000_002);
    await phoneReceives(onSim1, 'nothing to say', 1);
    const onSim2 = phone(1_000_003);
    await phoneReceives(onSim2, 'tell me twice', 2);

    const replies = await repliesTo(onSim2, 2);
    expect(replies.map((r) => [r.body, r.deviceId, r.simNumber])).toEqual([
      ['first', phoneId, 2],
      ['second', phoneId, 2],
    ]);
    expect((await repliesTo(forwarded, 1)).map((r) => [r.body, r.deviceId])).toEqual([['forwarded', phoneId]]);
    await vi.waitFor(async () => expect(arrivals.filter((a) => a.path === '/phone')).toHaveLength(1), WAIT);
    const [sim1Post] = arrivals.filter((a) => a.path === '/phone');
    const [sim2Post] = arrivals.filter((a) => a.path === '/sim2');
    expect([sim1Post!.valid, sim1Post!.params.From, sim1Post!.params.To]).toEqual([true, onSim1, '+15550000001']);
    // SIM 2 reported no number: To is the device id.
    expect([sim2Post!.valid, sim2Post!.params.From, sim2Post!.params.To, sim2Post!.params.Body]).toEqual([true, onSim2, phoneId, 'tell me twice']);
    const sim1 = await receivedFrom(onSim1);
    await vi.waitFor(async () => expect(await twilioDeliveries(sim1.id)).toMatchObject([{ state: 'succeeded' }]), WAIT);
    expect(await db.message.count({ where: { userId, to: onSim1 } })).toBe(0);
    const sent = (await sentLog()).filter((s) => [onSim2, forwarded].includes(s.to));
    expect(sent.map((s) => s.id).sort()).toEqual([...replies.map((r) => r.id), ...(await repliesTo(forwarded, 1)).map((r) => r.id)].sort());
    expect(sent.every((s) => s.sim === 2)).toBe(true);
  }, 60_000);

  it('records TwiML it cannot act on, and a reply the send refuses, on the delivery, and sends nothing', async () => {
    await patchDevice(nativeDevice.id, { twilio_sms_url: `${base}/bad` });
    answers.set('/bad', () => ({ status: 200, body: '<Response><Message>unclosed</Response>' }));
    const sender = phone(1_000_004);
    await nativeReceives(sender, 'bad twiml');
    const received = await receivedFrom(sender);
    await vi.waitFor(async () => expect(await twilioDeliveries(received.id)).toMatchObject([{ state: 'failed' }]), WAIT);
    const [bad] = await twilioDeliveries(received.id);
    expect(bad).toMatchObject({
      attempts: 1,
      lastStatusCode: 200,
      lastError: expect.stringMatching(/^The endpoint answered 200, but no reply was sent: The answer is not XML/),
    });

    await patchDevice(nativeDevice.id, { twilio_sms_url: `${base}/bad-number` });
    answers.set('/bad-number', () => twiml({ to: '12345', body: 'to nowhere' }));
    const other = phone(1_000_005);
    await nativeReceives(other, 'reply to a bad number');
    const second = await receivedFrom(other);
    await vi.waitFor(async () => expect(await twilioDeliveries(second.id)).toMatchObject([{ state: 'failed' }]), WAIT);
    expect((await twilioDeliveries(second.id))[0]!.lastError).toMatch(/no reply was sent: .*E\.164/);
    expect(await db.message.count({ where: { userId, to: { in: [sender, other, '12345'] } } })).toBe(0);
    // The user sees why, newest SMS first.
    const listed = (await (await fetch(`${cluster.baseUrl}/api/v1/twilio/sms-deliveries?limit=2`, { headers: { 'x-api-key': apiKey } })).json()) as {
      data: { received_id: string; from: string; url: string; state: string; last_status_code: number; last_error: string }[];
      total: number;
    };
    expect(listed.total).toBe(5);
    expect(listed.data).toMatchObject([
      { received_id: second.id, from: other, url: `${base}/bad-number`, state: 'failed', last_status_code: 200, last_error: expect.stringMatching(/E\.164/) },
      { received_id: received.id, from: sender, url: `${base}/bad`, state: 'failed', last_status_code: 200, last_error: expect.stringMatching(/not XML/) },
    ]);
    expect((await sentLog()).filter((s) => [sender, other, '12345'].includes(s.to))).toEqual([]);
  }, 60_000);
});
