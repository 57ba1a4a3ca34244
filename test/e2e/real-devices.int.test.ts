import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { SmsgwClient, SmsGateClient } from '@smsgw/client';
import { createApiKey, createDb, createDevice, createPairing, createUser, type Db } from '@smsgw/db';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { sentIds, startCluster, type Cluster, type ClusterOptions } from '../support/cluster.ts';

/**
 * Real devices through the real processes (docs/devices.md): simulated SMS Gate phones and native
 * devices side by side, claim answers lost on the way, phones that die, phones that never connect.
 * Every test checks the same outcome: every message delivered, none failed, none sent twice.
 */
let cluster: Cluster | undefined;
let database: TestDatabase | undefined;
let db: Db | undefined;
let logDir: string | undefined;

afterEach(async () => {
  await cluster?.stop();
  await db?.$disconnect();
  await database?.drop();
  if (logDir) await rm(logDir, { recursive: true, force: true });
  cluster = database = db = logDir = undefined;
});

// Short keepalives and grace, so that a dead phone lapses within seconds.
const ENV = { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '2', DEVICE_HEARTBEAT_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '2' };
const SIM_ENV = { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };

async function setUp(options: Partial<Pick<ClusterOptions, 'deviceTokens' | 'pairings' | 'dispatchers'>>) {
  logDir = await mkdtemp(join(tmpdir(), 'smsgw-devices-'));
  cluster = await startCluster({
    databaseUrl: database!.url,
    queuePrefix: `smsgw-devices-${randomBytes(4).toString('hex')}`,
    dispatchers: options.dispatchers ?? 2,
    logDir,
    env: ENV,
    simEnv: SIM_ENV,
    ...(options.deviceTokens && { deviceTokens: options.deviceTokens }),
    ...(options.pairings && { pairings: options.pairings }),
  });
  return cluster;
}

async function newUser() {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  db = createDb({ url: database.url, poolSize: 2 });
  const user = await createUser(db, { name: 'devices', monthlyQuota: 100_000 });
  const { key } = await createApiKey(db, { userId: user.id, name: 'devices' });
  return { user, key };
}

const nativeToken = async (userId: string, name: string) => (await createDevice(db!, { userId, name })).token;
const pairingCode = async (userId: string, name: string) => (await createPairing(db!, { userId, name, ttlSeconds: 600 })).code;

async function sendMany(client: SmsgwClient, count: number, perRequest = 100): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += perRequest) {
    const recipients = Array.from({ length: Math.min(perRequest, count - done) }, (_, i) => `+1555${String(done + i).padStart(7, '0')}`);
    ids.push(...(await client.send({ recipients, body: `real devices ${done}` })).message_ids);
  }
  return ids;
}

/** Waits until every message is final, then proves: all delivered, none failed, each sent exactly once. */
async function expectAllDeliveredOnce(client: SmsgwClient, ids: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [delivered, failed] = await Promise.all(['delivered', 'failed'].map(async (status) => (await client.listMessages({ status, limit: 1 })).total));
    if (delivered! + failed! === ids.length) break;
    if (Date.now() > deadline) throw new Error(`only ${delivered} delivered and ${failed} failed of ${ids.length} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const failures = await client.listMessages({ status: 'failed', limit: 5 });
  expect({ failed: failures.total, errors: failures.data.map((m) => m.error) }).toEqual({ failed: 0, errors: [] });
  const sent = await sentIds(logDir!);
  expect(sent).toHaveLength(ids.length);
  expect(new Set(sent)).toEqual(new Set(ids));
}

/** Messages per device, by the device name. */
async function perDevice(userId: string): Promise<Record<string, number>> {
  const rows = await db!.message.groupBy({ by: ['deviceId'], where: { userId }, _count: { _all: true } });
  const devices = await db!.device.findMany({ where: { userId }, select: { id: true, name: true } });
  return Object.fromEntries(devices.map((d) => [d.name, rows.find((r) => r.deviceId === d.id)?._count._all ?? 0]));
}

describe('SMS Gate phones and a native device together', () => {
  it('delivers 1,000 messages through 2 dispatchers, 2 SMS Gate phones and 1 native device, each once, evenly', async () => {
    const { user, key } = await newUser();
    await setUp({
      deviceTokens: [await nativeToken(user.id, 'native')],
      pairings: [await pairingCode(user.id, 'phone-a'), (await createPairing(db!, { userId: user.id, name: 'phone-b', ttlSeconds: 600 })).token],
    });
    const client = new SmsgwClient(cluster!.baseUrl, key);

    const ids = await sendMany(client, 1000);

    await expectAllDeliveredOnce(client, ids);
    const counts = await perDevice(user.id);
    expect(Object.keys(counts).sort()).toEqual(['native', 'phone-a', 'phone-b']);
    // Round-robin: 334, 333, 333 in some order.
    expect(Math.max(...Object.values(counts)) - Math.min(...Object.values(counts))).toBeLessThanOrEqual(1);
    const protocols = await db!.device.findMany({ where: { userId: user.id }, select: { name: true, protocol: true, appVersion: true } });
    expect(protocols.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'native', protocol: 'native', appVersion: null },
      { name: 'phone-a', protocol: 'sms_gate', appVersion: '1.68.0' },
      { name: 'phone-b', protocol: 'sms_gate', appVersion: '1.68.0' },
    ]);
  }, 240_000);
});

/** A claim whose answer the client never reads: the connection is cut as soon as the answer starts, or after `cutMs`. */
function cutClaim(baseUrl: string, token: string, cutMs: number): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET /api/v1/device/messages?limit=500 HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    });
    const cut = () => {
      socket.destroy();
      resolve();
    };
    socket.once('data', cut);
    socket.once('error', cut);
    setTimeout(cut, cutMs);
  });
}

describe('faults', () => {
  it('loses nothing when 20 claim answers are cut by the client', async () => {
    const { user, key } = await newUser();
    const token = await nativeToken(user.id, 'flaky network');
    await setUp({ dispatchers: 1 });
    const client = new SmsgwClient(cluster!.baseUrl, key);
    // The device connects (a request), so that it is available, then its answers get lost.
    const heartbeat = await fetch(`${cluster!.baseUrl}/api/v1/device/heartbeat`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(heartbeat.status).toBe(200);

    const ids = await sendMany(client, 500);
    await waitUntil(async () => (await db!.message.count({ where: { userId: user.id, state: 'assigned' } })) === 500);
    for (let i = 0; i < 20; i++) {
      await cutClaim(cluster!.baseUrl, token, 50);
      if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The cut claims offered the messages to the device (which never got them): they stay its own.
    const offered = await db!.message.count({ where: { userId: user.id, offeredAt: { not: null }, state: 'assigned' } });
    expect(offered).toBe(500);

    // The device comes back with a working network.
    await cluster!.startSim('device', { protocol: 'native', tokens: [token] }, 1);

    await expectAllDeliveredOnce(client, ids);
  }, 240_000);

  it('sends nothing to phones that died before the load: the live ones deliver everything', async () => {
    const { user, key } = await newUser();
    await setUp({ dispatchers: 2 });
    const client = new SmsgwClient(cluster!.baseUrl, key);
    await cluster!.startSim('live-phone', { protocol: 'sms-gate', pairings: [await pairingCode(user.id, 'live-phone')] }, 1);
    await cluster!.startSim('dead-phone', { protocol: 'sms-gate', pairings: [await pairingCode(user.id, 'dead-phone')] }, 2);
    await cluster!.startSim('live-native', { protocol: 'native', tokens: [await nativeToken(user.id, 'live-native')] }, 3);
    await cluster!.startSim('dead-native', { protocol: 'native', tokens: [await nativeToken(user.id, 'dead-native')] }, 4);

    await cluster!.kill('dead-phone', 'SIGKILL');
    await cluster!.kill('dead-native', 'SIGKILL');
    const killedAt = new Date();
    // After keepalive + grace, the dead are no longer available.
    await waitForAvailable(client, ['live-native', 'live-phone']);

    const ids = await sendMany(client, 400);

    await expectAllDeliveredOnce(client, ids);
    const counts = await perDevice(user.id);
    expect(counts).toMatchObject({ 'dead-phone': 0, 'dead-native': 0 });
    expect(counts['live-phone']! + counts['live-native']!).toBe(400);
    const events = await db!.messageEvent.count({ where: { messageId: { in: ids }, at: { gte: killedAt }, state: 'assigned' } });
    expect(events).toBe(400);
  }, 240_000);

  it('gives nothing to a phone that registered but never connected, nor to a device never seen', async () => {
    const { user, key } = await newUser();
    await setUp({ dispatchers: 1 });
    const client = new SmsgwClient(cluster!.baseUrl, key);
    // A phone that enrolled (POST /device) and then went silent, and a native device never started.
    const silent = new SmsGateClient(`${cluster!.baseUrl}/mobile/v1`);
    await silent.register({ auth: { code: await pairingCode(user.id, 'silent-phone') }, name: 'Google/silent' });
    await nativeToken(user.id, 'never-started');
    await cluster!.startSim('live', { protocol: 'native', tokens: [await nativeToken(user.id, 'live')] }, 1);

    const ids = await sendMany(client, 200);

    await expectAllDeliveredOnce(client, ids);
    expect(await perDevice(user.id)).toEqual({ 'silent-phone': 0, 'never-started': 0, live: 200 });
  }, 240_000);
});

async function waitForAvailable(client: SmsgwClient, expected: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data } = await client.listDevices();
    const available = data.filter((d) => d.available).map((d) => d.name).sort();
    if (JSON.stringify(available) === JSON.stringify(expected)) return;
    if (Date.now() > deadline) throw new Error(`available: ${available.join(', ')}; expected ${expected.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
