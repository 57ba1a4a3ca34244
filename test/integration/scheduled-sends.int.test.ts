/**
 * Scheduled sends, cancel, SIM choice and validity (issue 16) with the real dispatcher and simulated
 * devices in this process: a native phone (apps/device-sim) and an SMS Gate phone running app 1.68,
 * each writing a line per message it actually sent.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import { createPairing } from '@smsgw/db';
import { call, createTestUser, send, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';
import { startDeviceSim, type DeviceSim } from '../../apps/device-sim/src/device-sim.ts';
import { startSmsGatePhone } from '../../apps/device-sim/src/sms-gate-phone.ts';

let api: TestApi;
let base: string;
let dispatcher: Dispatcher;
let dir: string;
const sims: DeviceSim[] = [];
// The simulators log through pino, which this package does not depend on: a logger that drops everything.
const noop = () => undefined;
const silent = { level: 'silent', trace: noop, debug: noop, info: noop, warn: noop, error: noop, fatal: noop, child: () => silent };
const log = silent as unknown as Parameters<typeof startDeviceSim>[1];

beforeAll(async () => {
  api = await startTestApi({ DEVICE_HEARTBEAT_SECONDS: '1' });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  dispatcher = await startTestDispatcher(api, { SWEEP_INTERVAL_SECONDS: '1' });
  dir = await mkdtemp(join(tmpdir(), 'smsgw-scheduled-'));
});
afterEach(async () => {
  await Promise.all(sims.splice(0).map((sim) => sim.close()));
});
afterAll(async () => {
  await dispatcher?.close();
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface SentLine {
  id: string;
  to: string;
  at: string;
  sim: number;
}
let logs = 0;

function simConfig(env: Record<string, string>) {
  const file = join(dir, `sent-${++logs}.jsonl`);
  const config = loadConfig(DeviceSimConfigSchema, {
    SMSGW_URL: base,
    SIM_LOG_FILE: file,
    SIM_SEND_MS: '0',
    SIM_DELIVER_MS: '0',
    SIM_POLL_SECONDS: '1',
    SIM_RECONNECT_MS: '200',
    SIM_RETRY_MS: '200',
    ...env,
  });
  const lines = async (): Promise<SentLine[]> =>
    (await readFile(file, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { config, lines };
}

/** A native simulated phone of the device. */
async function nativeSim(token: string) {
  const { config, lines } = simConfig({ DEVICE_TOKEN: token });
  const sim = await startDeviceSim(config, log);
  sims.push(sim);
  return { sim, lines };
}

/** Until the device holds its event stream (a send before then may find no available device). */
async function untilStreaming(deviceId: string): Promise<void> {
  await vi.waitFor(async () => expect((await api.db.device.findUniqueOrThrow({ where: { id: deviceId } })).streamSeenAt).not.toBeNull(), {
    timeout: 10_000,
    interval: 50,
  });
}

/** A simulated SMS Gate phone of the user, app 1.68, enrolled with a pairing code; `sendMs` to send one message. */
async function smsGatePhone(userId: string, sendMs = 0) {
  const { code } = await createPairing(api.db, { userId, ttlSeconds: 600 });
  const { config, lines } = simConfig({
    SIM_PROTOCOL: 'sms-gate',
    SIM_STATE_DIR: join(dir, `state-${logs}`),
    SIM_APP_VERSION: '1.68.0',
    SIM_SEND_MS: String(sendMs),
  });
  const phone = await startSmsGatePhone(config, { index: 0, pairing: code }, log);
  sims.push(phone);
  await vi.waitFor(() => expect(phone.connects).toBeGreaterThan(0), { timeout: 10_000, interval: 50 });
  return { phone, lines };
}

const message = (id: string) => api.db.message.findUniqueOrThrow({ where: { id } });
const history = async (id: string) => api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });

async function sendNow(apiKey: string, body: object): Promise<{ ids: string[]; batchId?: string }> {
  const res = await send(api.app, apiKey, { body: 'scheduled', ...body });
  expect(res.statusCode).toBe(200);
  return { ids: res.json().message_ids, batchId: res.json().batch_id };
}

describe('send_at', () => {
  it('gives a device nothing before send_at and the message goes out within 5 s after it', async () => {
    const user = await createTestUser(api.db);
    const { sim, lines } = await nativeSim(user.devices[0]!.token);
    const sendAt = new Date(Date.now() + 3000);
    const { ids } = await sendNow(user.apiKey, { recipients: [uniquePhone(), uniquePhone()], send_at: sendAt.toISOString() });

    await vi.waitFor(() => expect([...sim.sent].sort()).toEqual([...ids].sort()), { timeout: 15_000, interval: 50 });
    for (const id of ids) {
      const row = await message(id);
      expect(row.offeredAt!.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
      const assigned = (await history(id)).find((e) => e.state === 'assigned')!;
      expect(assigned.at.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
    }
    for (const line of await lines()) {
      expect(Date.parse(line.at)).toBeGreaterThanOrEqual(sendAt.getTime());
      expect(Date.parse(line.at)).toBeLessThanOrEqual(sendAt.getTime() + 5000);
    }
  });

  it('cancelled before send_at, a message never reaches the device while the rest of its batch goes out', async () => {
    const user = await createTestUser(api.db);
    const { sim } = await nativeSim(user.devices[0]!.token);
    const { ids } = await sendNow(user.apiKey, { recipients: [uniquePhone(), uniquePhone()], send_at: new Date(Date.now() + 2000).toISOString() });
    const res = await call(api.app, user.apiKey, 'POST', `/api/v1/sms/${ids[0]}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('cancelled');

    await vi.waitFor(() => expect(sim.sent).toContain(ids[1]), { timeout: 15_000, interval: 50 });
    expect(sim.sent).not.toContain(ids[0]);
    expect(await message(ids[0]!)).toMatchObject({ state: 'cancelled', offeredAt: null, deviceId: null });
  });
});

describe('validity', () => {
  it('fails a message no device took by its valid_until with its reason; the device never gets it', async () => {
    const user = await createTestUser(api.db);
    // The device is away: the message waits for it.
    await api.db.device.update({ where: { id: user.deviceId! }, data: { lastSeenAt: new Date(Date.now() - 3600_000) } });
    const sendAt = new Date(Date.now() + 1000);
    const {
      ids: [id],
    } = await sendNow(user.apiKey, { recipients: [uniquePhone()], send_at: sendAt.toISOString(), ttl_seconds: 1 });

    await vi.waitFor(async () => expect(await message(id!)).toMatchObject({ state: 'failed', error: 'expired before it could be sent' }), {
      timeout: 15_000,
      interval: 100,
    });
    const { sim } = await nativeSim(user.devices[0]!.token);
    await untilStreaming(user.deviceId!);
    const other = await sendNow(user.apiKey, { recipients: [uniquePhone()] });
    await vi.waitFor(() => expect(sim.sent).toEqual(other.ids), { timeout: 15_000, interval: 50 });
    expect((await message(id!)).offeredAt).toBeNull();
    expect((await call(api.app, user.apiKey, 'GET', `/api/v1/sms/${id}`)).json()).toMatchObject({ status: 'failed', error: 'expired before it could be sent' });
  });
});

describe('sim_number', () => {
  it('reaches a native device (its claim) and an SMS Gate phone (its pull), which send from that SIM', async () => {
    const user = await createTestUser(api.db);
    const native = await nativeSim(user.devices[0]!.token);
    const viaNative = await sendNow(user.apiKey, { recipients: [uniquePhone()], sim_number: 2, device_id: user.deviceId });
    await vi.waitFor(async () => expect(await native.lines()).toEqual([expect.objectContaining({ id: viaNative.ids[0], sim: 2 })]), {
      timeout: 15_000,
      interval: 50,
    });

    const owner = await createTestUser(api.db, { devices: 0 });
    const { phone, lines } = await smsGatePhone(owner.userId);
    const viaPhone = await sendNow(owner.apiKey, { recipients: [uniquePhone()], sim_number: 3 });
    await vi.waitFor(async () => expect(await lines()).toEqual([expect.objectContaining({ id: viaPhone.ids[0], sim: 3 })]), { timeout: 15_000, interval: 50 });
    expect(phone.sent).toEqual(viaPhone.ids);
  });
});

describe('cancel on an SMS Gate phone (app 1.68)', () => {
  it('asks the phone for the messages it holds unsent, acknowledged or not; its Cancelled answers cancel them, and it never sends them', async () => {
    const owner = await createTestUser(api.db, { devices: 0 });
    // One message at a time, slowly (3 s each): the phone acknowledges all three at once (Pending) and
    // holds two of them while it sends the first.
    const { phone } = await smsGatePhone(owner.userId, 3000);
    const { ids, batchId } = await sendNow(owner.apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone()] });
    await vi.waitFor(
      async () => {
        const rows = await Promise.all(ids.map(message));
        expect(rows.every((r) => r.offeredAt !== null && (r.state === 'assigned' || r.state === 'sending'))).toBe(true);
        expect(rows.some((r) => r.state === 'sending')).toBe(true);
      },
      { timeout: 30_000, interval: 50 },
    );

    const res = await call(api.app, owner.apiKey, 'POST', `/api/v1/sms/batch/${batchId}/cancel`);
    expect(res.statusCode).toBe(200);
    // All three are asked: the phone decides, and cannot take back the one it is sending.
    expect(res.json()).toEqual({ batch_id: batchId, cancelled: 0, cancelling: 3, not_cancelled: 0, not_cancelled_ids: [] });

    await vi.waitFor(
      async () => {
        const states = (await Promise.all(ids.map(message))).map((r) => r.state).sort();
        expect(states).toEqual(['cancelled', 'cancelled', 'delivered']);
      },
      { timeout: 20_000, interval: 100 },
    );
    // The one it sent is the one delivered; the two it held were never sent.
    expect(phone.sent).toHaveLength(1);
    expect((await message(phone.sent[0]!)).state).toBe('delivered');
    const quota = await api.db.quotaUsage.aggregate({ where: { userId: owner.userId }, _sum: { used: true } });
    expect(quota._sum.used).toBe(1);
  });

  it('answers 409 for a message a native device has taken', async () => {
    const user = await createTestUser(api.db);
    const { sim } = await nativeSim(user.devices[0]!.token);
    const {
      ids: [id],
    } = await sendNow(user.apiKey, { recipients: [uniquePhone()] });
    await vi.waitFor(() => expect(sim.sent).toContain(id), { timeout: 15_000, interval: 50 });
    const res = await call(api.app, user.apiKey, 'POST', `/api/v1/sms/${id}/cancel`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('not_cancellable');
  });
});
