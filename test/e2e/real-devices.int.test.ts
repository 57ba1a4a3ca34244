import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SmsgwClient, SmsGateClient } from '@smsgw/client';
import { createDevice, createPairing, type Db } from '@smsgw/db';
import { sentIds, type Cluster, type ClusterOptions } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Real devices through the real processes (docs/devices.md): simulated SMS Gate phones and native
 * devices side by side, claim answers lost on the way, phones that die, phones that never connect.
 * Every test checks the same outcome: every message delivered, none failed, none sent twice.
 */
const openE2e = e2ePerTest('devices');

// Short keepalives and grace, so that a dead phone lapses within seconds.
const ENV = { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '2', DEVICE_HEARTBEAT_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '2' };
const SIM_ENV = { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };

/** The environment and a user of it; `setUp` starts the processes. */
async function newUser() {
  const e2e = await openE2e();
  const { user, key } = await e2e.user('devices', 100_000);
  const setUp = (options: Partial<Pick<ClusterOptions, 'deviceTokens' | 'pairings' | 'dispatchers'>>): Promise<Cluster> =>
    e2e.startCluster({ env: ENV, simEnv: SIM_ENV, ...options });
  const nativeToken = async (name: string) => (await createDevice(e2e.db, { userId: user.id, name })).token;
  const pairingCode = async (name: string) => (await createPairing(e2e.db, { userId: user.id, name, ttlSeconds: 600 })).code;
  return { e2e, db: e2e.db, user, key, setUp, nativeToken, pairingCode };
}

async function sendMany(client: SmsgwClient, count: number, perRequest = 100): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += perRequest) {
    const recipients = Array.from({ length: Math.min(perRequest, count - done) }, (_, i) => `+1555${String(done + i).padStart(7, '0')}`);
    ids.push(...(await client.send({ recipients, body: `real devices ${done}` })).message_ids);
  }
  return ids;
}

/** Waits until every message is final, then proves: all delivered, none failed, each sent exactly once. */
async function expectAllDeliveredOnce({ logDir }: E2e, client: SmsgwClient, ids: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [delivered, failed] = await Promise.all(['delivered', 'failed'].map(async (status) => (await client.listMessages({ status, limit: 1 })).total));
    if (delivered! + failed! === ids.length) break;
    if (Date.now() > deadline) throw new Error(`only ${delivered} delivered and ${failed} failed of ${ids.length} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const failures = await client.listMessages({ status: 'failed', limit: 5 });
  expect({ failed: failures.total, errors: failures.data.map((m) => m.error) }).toEqual({ failed: 0, errors: [] });
  const sent = await sentIds(logDir);
  expect(sent).toHaveLength(ids.length);
  expect(new Set(sent)).toEqual(new Set(ids));
}

/** Messages per device, by the device name. */
async function perDevice(db: Db, userId: string): Promise<Record<string, number>> {
  const rows = await db.message.groupBy({ by: ['deviceId'], where: { userId }, _count: { _all: true } });
  const devices = await db.device.findMany({ where: { userId }, select: { id: true, name: true } });
  return Object.fromEntries(devices.map((d) => [d.name, rows.find((r) => r.deviceId === d.id)?._count._all ?? 0]));
}

describe('SMS Gate phones and a native device together', () => {
  it('delivers 1,000 messages through 2 dispatchers, 2 SMS Gate phones and 1 native device, each once, evenly', async () => {
    const { e2e, db, user, key, setUp, nativeToken, pairingCode } = await newUser();
    const cluster = await setUp({
      deviceTokens: [await nativeToken('native')],
      pairings: [await pairingCode('phone-a'), (await createPairing(db, { userId: user.id, name: 'phone-b', ttlSeconds: 600 })).token],
    });
    const client = new SmsgwClient(cluster.baseUrl, key);

    const ids = await sendMany(client, 1000);

    await expectAllDeliveredOnce(e2e, client, ids);
    const counts = await perDevice(db, user.id);
    expect(Object.keys(counts).sort()).toEqual(['native', 'phone-a', 'phone-b']);
    // Round-robin: 334, 333, 333 in some order.
    expect(Math.max(...Object.values(counts)) - Math.min(...Object.values(counts))).toBeLessThanOrEqual(1);
    const protocols = await db.device.findMany({ where: { userId: user.id }, select: { name: true, protocol: true, appVersion: true } });
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
    const { e2e, db, user, key, setUp, nativeToken } = await newUser();
    const token = await nativeToken('flaky network');
    const cluster = await setUp({ dispatchers: 1 });
    const client = new SmsgwClient(cluster.baseUrl, key);
    // The device connects (a request), so that it is available, then its answers get lost.
    const heartbeat = await fetch(`${cluster.baseUrl}/api/v1/device/heartbeat`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(heartbeat.status).toBe(200);

    const ids = await sendMany(client, 500);
    await waitUntil(async () => (await db.message.count({ where: { userId: user.id, state: 'assigned' } })) === 500);
    for (let i = 0; i < 20; i++) {
      await cutClaim(cluster.baseUrl, token, 50);
      if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The cut claims offered the messages to the device (which never got them): they stay its own.
    const offered = await db.message.count({ where: { userId: user.id, offeredAt: { not: null }, state: 'assigned' } });
    expect(offered).toBe(500);

    // The device comes back with a working network.
    await cluster.startSim('device', { protocol: 'native', tokens: [token] }, 1);

    await expectAllDeliveredOnce(e2e, client, ids);
  }, 240_000);

  it('sends nothing to phones that died before the load: the live ones deliver everything', async () => {
    const { e2e, db, user, key, setUp, nativeToken, pairingCode } = await newUser();
    const cluster = await setUp({ dispatchers: 2 });
    const client = new SmsgwClient(cluster.baseUrl, key);
    const phones = { 'live-phone': await pairingCode('live-phone'), 'dead-phone': await pairingCode('dead-phone') };
    const natives = { 'live-native': await nativeToken('live-native'), 'dead-native': await nativeToken('dead-native') };
    // Started together, each process waits until all four hold a stream.
    await Promise.all([
      ...Object.entries(phones).map(([name, code]) => cluster.startSim(name, { protocol: 'sms-gate', pairings: [code] }, 4)),
      ...Object.entries(natives).map(([name, token]) => cluster.startSim(name, { protocol: 'native', tokens: [token] }, 4)),
    ]);

    await cluster.kill('dead-phone', 'SIGKILL');
    await cluster.kill('dead-native', 'SIGKILL');
    const killedAt = new Date();
    // After keepalive + grace, the dead are no longer available.
    await waitForAvailable(client, ['live-native', 'live-phone']);

    const ids = await sendMany(client, 400);

    await expectAllDeliveredOnce(e2e, client, ids);
    const counts = await perDevice(db, user.id);
    expect(counts).toMatchObject({ 'dead-phone': 0, 'dead-native': 0 });
    expect(counts['live-phone']! + counts['live-native']!).toBe(400);
    const events = await db.messageEvent.count({ where: { messageId: { in: ids }, at: { gte: killedAt }, state: 'assigned' } });
    expect(events).toBe(400);
  }, 240_000);

  it('gives nothing to a phone that registered but never connected, nor to a device never seen', async () => {
    const { e2e, db, user, key, setUp, nativeToken, pairingCode } = await newUser();
    const cluster = await setUp({ dispatchers: 1 });
    const client = new SmsgwClient(cluster.baseUrl, key);
    // A phone that enrolled (POST /device) and then went silent, and a native device never started.
    const silent = new SmsGateClient(`${cluster.baseUrl}/mobile/v1`);
    await silent.register({ auth: { code: await pairingCode('silent-phone') }, name: 'Google/silent' });
    await nativeToken('never-started');
    await cluster.startSim('live', { protocol: 'native', tokens: [await nativeToken('live')] }, 1);

    const ids = await sendMany(client, 200);

    await expectAllDeliveredOnce(e2e, client, ids);
    expect(await perDevice(db, user.id)).toEqual({ 'silent-phone': 0, 'never-started': 0, live: 200 });
  }, 240_000);
});

async function waitForAvailable(client: SmsgwClient, expected: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data } = await client.listDevices();
    const available = data
      .filter((d) => d.available)
      .map((d) => d.name)
      .sort();
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
