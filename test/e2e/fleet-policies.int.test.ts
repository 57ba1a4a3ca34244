import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { appDate, SmsgwClient, SmsGateClient } from '@smsgw/client';
import { createApiKey, createDevice, createPairing, createUser, type Db } from '@smsgw/db';
import type { Cluster } from '../support/cluster.ts';
import { e2eForAll } from '../support/e2e-fixture.ts';

/**
 * Carrier budgets, SIM choice, opt-out and the queue limit through the real processes (issue 18,
 * "Done when"; docs/decisions.md "Carrier budgets", "Opt-out", "No stale sends"): the bundled API,
 * two dispatchers, native simulated devices and simulated SMS Gate phones. What reached a device is
 * read from the simulators' sent log (`{id, to, at, sim}` a line).
 */
interface Env {
  db: Db;
  logDir: string;
  cluster: Cluster;
  /** Devices holding a stream so far, all users together (what `startSim` waits for). */
  streams: number;
}

const SIM_ENV = { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };
const ENV = { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '1', DEVICE_HEARTBEAT_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '2' };
const WAIT = { timeout: 30_000, interval: 200 };
const SHORT = 'fleet policies: one segment';
// 200 GSM-7 characters: two segments of 153.
const LONG = `fleet policies: two segments ${'x'.repeat(171)}`;

/** The environment of the tests of the describe block this is called in, with `env` for its processes. */
function environment(name: string, env: Record<string, string>): () => Env {
  let current: Env | undefined;
  e2eForAll(
    name,
    async (e2e) => {
      const cluster = await e2e.startCluster({ env: { ...ENV, ...env }, simEnv: SIM_ENV });
      current = { db: e2e.db, logDir: e2e.logDir, cluster, streams: 0 };
    },
    90_000,
  );
  return () => current!;
}

async function newUser(env: Env, name: string) {
  const user = await createUser(env.db, { name, monthlyQuota: 1000 });
  const { key } = await createApiKey(env.db, { userId: user.id, name });
  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${env.cluster.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T };
  };
  return { userId: user.id, client: new SmsgwClient(env.cluster.baseUrl, key), call };
}

/** Native simulated devices of `userId` in one device-sim process named `name`. */
async function nativeDevices(env: Env, userId: string, name: string, names: string[]) {
  const devices = [];
  for (const device of names) {
    const { device: row, token } = await createDevice(env.db, { userId, name: device });
    devices.push({ id: row.id, token });
  }
  env.streams += names.length;
  await env.cluster.startSim(name, { protocol: 'native', tokens: devices.map((d) => d.token) }, env.streams);
  return devices;
}

/** A simulated SMS Gate phone of `userId`, paired by code, keeping its registration in `stateDir`. */
async function smsGatePhone(env: Env, userId: string, name: string, stateDir: string) {
  const { code } = await createPairing(env.db, { userId, name, ttlSeconds: 600 });
  env.streams += 1;
  await env.cluster.startSim(name, { protocol: 'sms-gate', pairings: [code] }, env.streams, { SIM_STATE_DIR: stateDir });
  return (await env.db.device.findFirstOrThrow({ where: { userId, name } })).id;
}

interface SentLine {
  id: string;
  to: string;
  at: string;
  sim: number;
}
async function sentLog(env: Env): Promise<SentLine[]> {
  const text = await readFile(join(env.logDir, 'sent.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SentLine);
}

async function allFinal(env: Env, ids: string[], timeout = 30_000) {
  await vi.waitFor(
    async () => {
      expect(await env.db.message.count({ where: { id: { in: ids }, state: { in: ['delivered', 'failed'] } } })).toBe(ids.length);
    },
    { timeout, interval: 200 },
  );
  return env.db.message.findMany({
    where: { id: { in: ids } },
    select: { id: true, to: true, state: true, error: true, deviceId: true, segments: true, simNumber: true },
  });
}

const phone = (n: number) => `+1555${String(n).padStart(7, '0')}`;

describe('carrier budgets, SIM choice and opt-out through the real processes', () => {
  const env = environment('fleet', {});

  it('holds an hourly segment budget and a unique-recipient budget across two dispatchers, spilling the rest to the device with room', async () => {
    const e = env();
    const { userId, client, call } = await newUser(e, 'budgets');
    const [limited, recipients, open] = await nativeDevices(e, userId, 'budget-devices', ['segments', 'recipients', 'open']);
    expect((await call('PATCH', `/api/v1/devices/${limited!.id}`, { segments_per_hour: 10 })).status).toBe(200);
    expect((await call('PATCH', `/api/v1/devices/${recipients!.id}`, { unique_recipients_per_month: 3 })).status).toBe(200);

    // 30 messages to 30 numbers, half of them two segments long, in alternating sends.
    const ids: string[] = [];
    for (let round = 0; round < 10; round++) {
      const to = [0, 1, 2].map((i) => phone(1_000_000 + round * 3 + i));
      ids.push(...(await client.send({ recipients: to, body: round % 2 === 0 ? LONG : SHORT })).message_ids);
    }
    const rows = await allFinal(e, ids);
    expect(rows.filter((r) => r.state !== 'delivered')).toEqual([]);
    const sent = await sentLog(e);
    const sentIds = sent.map((s) => s.id);
    expect(new Set(sentIds).size).toBe(sentIds.length);
    expect(sentIds.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());

    const on = (id: string) => rows.filter((r) => r.deviceId === id);
    // Parts, not messages: at most 10 segments on the hourly-budgeted device, some of them two-part messages.
    const segments = on(limited!.id).reduce((sum, r) => sum + r.segments, 0);
    expect(segments).toBeLessThanOrEqual(10);
    expect(segments).toBeGreaterThanOrEqual(9);
    expect(on(limited!.id).some((r) => r.segments === 2)).toBe(true);
    // Three numbers at most on the recipient-budgeted device; the unbudgeted one took the rest.
    expect(new Set(on(recipients!.id).map((r) => r.to)).size).toBe(3);
    expect(on(open!.id).length).toBe(30 - on(limited!.id).length - on(recipients!.id).length);
    expect(on(open!.id).length).toBeGreaterThan(10);

    const limitedRecord = (
      await call<{ usage: Record<string, { limit: number | null; used: number; resets_at: string | null }>; health: { reasons: string[] } }>(
        'GET',
        `/api/v1/devices/${limited!.id}`,
      )
    ).json;
    expect(limitedRecord.usage.segments_per_hour).toEqual({ limit: 10, used: segments, resets_at: expect.any(String) });
    const resets = Date.parse(limitedRecord.usage.segments_per_hour!.resets_at!);
    expect(resets - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(resets - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    const recipientsUsage = (await call<{ usage: Record<string, unknown> }>('GET', `/api/v1/devices/${recipients!.id}`)).json.usage;
    expect(recipientsUsage.unique_recipients_per_month).toEqual({ limit: 3, used: 3, resets_at: expect.any(String) });

    // At its recipient limit, the device still sends to a number it knows, while a new number named to it waits.
    const known = on(recipients!.id)[0]!.to;
    const [waiting] = (await client.send({ recipients: [phone(1_000_100)], body: SHORT, device_id: recipients!.id })).message_ids;
    const [again] = (await client.send({ recipients: [known], body: SHORT, device_id: recipients!.id })).message_ids;
    expect(await allFinal(e, [again!])).toMatchObject([{ state: 'delivered', deviceId: recipients!.id }]);
    expect(await client.getMessage(waiting!)).toMatchObject({ status: 'queued' });
    expect((await sentLog(e)).map((s) => s.id)).not.toContain(waiting);
    expect((await call<{ usage: Record<string, unknown> }>('GET', `/api/v1/devices/${recipients!.id}`)).json.usage.unique_recipients_per_month).toMatchObject({
      limit: 3,
      used: 3,
    });
  }, 60_000);

  it('picks the SIM with room on an SMS Gate phone with two SIMs: the phone sends from the SIMs smsgw named', async () => {
    const e = env();
    const { userId, client, call } = await newUser(e, 'sims');
    const phoneId = await smsGatePhone(e, userId, 'two-sims', join(e.logDir, 'sims-state'));
    // The simulated phone reports one SIM; as a dual-SIM phone's app would, its device record lists two
    // (as apps/dispatcher/src/budgets.int.test.ts does).
    await e.db.device.update({
      where: { id: phoneId },
      data: {
        simCards: [
          { slotIndex: 0, simNumber: 1 },
          { slotIndex: 1, simNumber: 2 },
        ],
      },
    });
    expect((await call('PATCH', `/api/v1/devices/${phoneId}`, { sims: [{ sim_number: 1, segments_per_hour: 3 }] })).status).toBe(200);

    // SIM 1 has room for a two-part and a one-part message; everything after it goes out on SIM 2.
    const ids: string[] = [];
    ids.push(...(await client.send({ recipients: [phone(2_000_000)], body: LONG })).message_ids);
    ids.push(...(await client.send({ recipients: [phone(2_000_001), phone(2_000_002), phone(2_000_003), phone(2_000_004)], body: SHORT })).message_ids);
    const rows = await allFinal(e, ids);
    expect(rows.map((r) => r.state)).toEqual(Array(5).fill('delivered'));
    const sent = (await sentLog(e)).filter((s) => ids.includes(s.id));
    expect(sent).toHaveLength(5);
    // Each message sent from the SIM its record names; SIM 1 within its 3 segments, SIM 2 the rest.
    for (const line of sent) expect(line.sim).toBe(rows.find((r) => r.id === line.id)!.simNumber);
    const onSim1 = rows.filter((r) => r.simNumber === 1);
    expect(onSim1.reduce((sum, r) => sum + r.segments, 0)).toBe(3);
    expect(rows.filter((r) => r.simNumber === 2).length).toBe(5 - onSim1.length);
    expect(sent.map((s) => s.sim).sort()).toEqual([...onSim1.map(() => 1), ...Array(5 - onSim1.length).fill(2)]);

    const { usage } = (await call<{ usage: { sims: unknown[] } }>('GET', `/api/v1/devices/${phoneId}`)).json;
    expect(usage.sims).toEqual([expect.objectContaining({ sim_number: 1, segments_per_hour: expect.objectContaining({ limit: 3, used: 3 }) })]);
  }, 60_000);

  it('STOP from an incoming SMS refuses later messages to the sender (never sent, not charged); START from the other protocol lifts it', async () => {
    const e = env();
    const { userId, client, call } = await newUser(e, 'opt-out');
    const [device] = await nativeDevices(e, userId, 'opt-out-device', ['native']);
    const stateDir = join(e.logDir, 'opt-out-state');
    const phoneId = await smsGatePhone(e, userId, 'opt-out-phone', stateDir);
    const stopper = phone(3_000_000);
    const other = phone(3_000_001);
    const listed = async () => (await call<{ data: { phone: string }[] }>('GET', '/api/v1/opt-outs')).json.data.map((o) => o.phone);
    const quotaUsed = async () => (await call<{ used: number }>('GET', '/api/v1/quota')).json.used;

    // STOP reaches the native device, which posts it as its inbound SMS.
    const inbound = await fetch(`${e.cluster.baseUrl}/api/v1/device/inbound`, {
      method: 'POST',
      headers: { authorization: `Bearer ${device!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ id: randomUUID(), from: stopper, message: ' Stop ', received_at: new Date().toISOString() }] }),
    });
    expect(inbound.status).toBe(202);
    expect(await listed()).toEqual([stopper]);

    const before = await quotaUsed();
    const result = (await client.send({ recipients: [stopper, other], body: 'after stop' })) as { message_ids: string[]; opted_out?: string[] };
    expect(result.opted_out).toEqual([stopper]);
    const [refused, allowed] = result.message_ids;
    expect(await client.getMessage(refused!)).toMatchObject({ status: 'failed', error: 'recipient opted out' });
    expect(await quotaUsed()).toBe(before + 1);
    expect(await allFinal(e, [allowed!])).toMatchObject([{ state: 'delivered' }]);
    // Still refused once the other message went out, and never at a device.
    expect(await e.db.message.findUniqueOrThrow({ where: { id: refused! } })).toMatchObject({ state: 'failed', deviceId: null, error: 'recipient opted out' });
    const sent = (await sentLog(e)).map((s) => s.id);
    expect(sent).toContain(allowed);
    expect(sent).not.toContain(refused);
    expect(await e.db.messageEvent.count({ where: { messageId: refused!, state: 'assigned' } })).toBe(0);

    // START reaches the SMS Gate phone, which forwards it through its signed sms:received webhook.
    const registration = JSON.parse(await readFile(join(stateDir, '0.json'), 'utf8')) as { id: string; token: string };
    expect(registration.id).toBe(phoneId);
    const app = new SmsGateClient(`${e.cluster.baseUrl}/mobile/v1`, { token: registration.token });
    const signingKey = (await app.settings()).webhooks!.signing_key!;
    const hook = (await app.webhooks()).find((w) => w.event === 'sms:received')!;
    const receivedAt = appDate(new Date(), '+00:00');
    await app.postWebhook(hook.url, signingKey, {
      id: randomBytes(10).toString('hex'),
      webhookId: hook.id,
      event: 'sms:received',
      deviceId: phoneId,
      payload: {
        messageId: createHash('sha256').update(`${stopper}START${receivedAt}`).digest('hex').slice(0, 8),
        message: 'start',
        sender: stopper,
        recipient: '+15550990000',
        simNumber: 1,
        receivedAt,
        phoneNumber: stopper,
      },
    });
    await vi.waitFor(async () => expect(await listed()).toEqual([]), WAIT);

    const [welcome] = (await client.send({ recipients: [stopper], body: 'after start' })).message_ids;
    expect(await allFinal(e, [welcome!])).toMatchObject([{ state: 'delivered', error: null }]);
    expect((await sentLog(e)).filter((s) => s.id === welcome)).toEqual([expect.objectContaining({ to: stopper })]);
    expect(await quotaUsed()).toBe(before + 2);
  }, 60_000);
});

describe('MAX_QUEUE_SECONDS through the real processes', () => {
  const MAX_QUEUE_SECONDS = 4;
  const SWEEP_SECONDS = 1;
  const env = environment('expiry', { MAX_QUEUE_SECONDS: String(MAX_QUEUE_SECONDS), SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS) });

  it('fails a message no device could take "expired before it could be sent" within MAX_QUEUE_SECONDS and a sweep', async () => {
    const e = env();
    // A user whose only device is online but out of budget: its second message waits in round-robin.
    const full = await newUser(e, 'full');
    const [device] = await nativeDevices(e, full.userId, 'expiry-device', ['one-a-hour']);
    expect((await full.call('PATCH', `/api/v1/devices/${device!.id}`, { segments_per_hour: 1 })).status).toBe(200);
    const [first] = (await full.client.send({ recipients: [phone(4_000_000)], body: SHORT })).message_ids;
    expect(await allFinal(e, [first!])).toMatchObject([{ state: 'delivered' }]);
    // A user whose only device is offline (never connected): a send due in two seconds is accepted and finds no device.
    const offline = await newUser(e, 'offline');
    await createDevice(e.db, { userId: offline.userId, name: 'switched off' });

    const [waiting] = (await full.client.send({ recipients: [phone(4_000_001)], body: SHORT })).message_ids;
    const sendAt = new Date(Date.now() + 2000);
    const [scheduled] = (await offline.client.send({ recipients: [phone(4_000_002)], body: SHORT, send_at: sendAt.toISOString() })).message_ids;

    const rows = await allFinal(e, [waiting!, scheduled!], 30_000);
    for (const row of rows) expect(row).toMatchObject({ state: 'failed', error: 'expired before it could be sent' });
    const records = await e.db.message.findMany({
      where: { id: { in: [waiting!, scheduled!] } },
      select: { id: true, createdAt: true, sendAt: true, failedAt: true, assignedAt: true },
    });
    for (const record of records) {
      // Counted from creation, or from send_at for a scheduled message.
      const due = (record.sendAt ?? record.createdAt).getTime();
      const waited = record.failedAt!.getTime() - due;
      expect(waited).toBeGreaterThanOrEqual(MAX_QUEUE_SECONDS * 1000);
      expect(waited).toBeLessThanOrEqual((MAX_QUEUE_SECONDS + SWEEP_SECONDS + 4) * 1000);
      expect(record.assignedAt).toBeNull();
    }
    expect((await full.client.getMessage(waiting!)).status).toBe('failed');
    const sent = (await sentLog(e)).map((s) => s.id);
    expect(sent).toContain(first);
    expect(sent).not.toContain(waiting);
    expect(sent).not.toContain(scheduled);
  }, 60_000);
});
