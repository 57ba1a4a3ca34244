import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { generateWebhookSecret, newId, verifyWebhook } from '@smsgw/core';
import { createDevice, createPairing } from '@smsgw/db';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Device health and its alerts through the real processes (docs/devices.md, "Health" and
 * "Alerts"): the API, two dispatchers and simulated devices of both protocols.
 */
const openE2e = e2ePerTest('health');

const OFFLINE_AFTER_SECONDS = 10;
const SWEEP_SECONDS = 1;
const ENV = {
  WORKER_LOCK_SECONDS: '3',
  SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
  DEVICE_OFFLINE_AFTER_SECONDS: String(OFFLINE_AFTER_SECONDS),
  DEVICE_HEARTBEAT_SECONDS: '1',
  DEVICE_STREAM_GRACE_SECONDS: '2',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};
const SIM_ENV = { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };
const QUARANTINE_AFTER = 3;

interface Arrival {
  type: string;
  at: number;
  verified: boolean;
  data: { id: string; name: string; health: { status: string; reasons: string[] } };
}

async function startReceiver(e2e: E2e, secret: string): Promise<{ url: string; arrivals: Arrival[] }> {
  const arrivals: Arrival[] = [];
  const base = await e2e.listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = (name: string) => String(req.headers[name] ?? '');
      const parsed = JSON.parse(body) as { type: string; data: Arrival['data'] };
      arrivals.push({
        type: parsed.type,
        data: parsed.data,
        at: Date.now(),
        verified: verifyWebhook(secret, { id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature') }, body),
      });
      res.writeHead(204).end();
    });
  });
  return { url: `${base}/hook`, arrivals };
}

async function setUp(env: Record<string, string> = {}) {
  const e2e = await openE2e();
  const { user, key } = await e2e.user('health');
  const cluster = await e2e.startCluster({ env: { ...ENV, ...env }, simEnv: SIM_ENV });
  return { e2e, cluster, db: e2e.db, user, client: new SmsgwClient(cluster.baseUrl, key) };
}

async function healthOf(client: SmsgwClient, name: string) {
  const { data } = await client.listDevices();
  return (data.find((d) => d.name === name) as unknown as { health: Record<string, unknown> } | undefined)?.health;
}

describe('device health through the real processes', () => {
  it('shows the battery and signal of a native heartbeat and of an SMS Gate system:ping', async () => {
    const { cluster, db, user, client } = await setUp();
    const token = (await createDevice(db, { userId: user.id, name: 'native' })).token;
    await cluster.startSim('native', { protocol: 'native', tokens: [token] }, 1);
    const { code } = await createPairing(db, { userId: user.id, name: 'phone', ttlSeconds: 600 });
    await cluster.startSim('phone', { protocol: 'sms-gate', pairings: [code] }, 2);

    await vi.waitFor(
      async () => {
        expect(await healthOf(client, 'native')).toEqual({
          status: 'online',
          reasons: [],
          last_seen_at: expect.any(String),
          connection: 'stream',
          app_version: null,
          battery: { level: 100, charging: true },
          signal: { dbm: -67, network: 'registered' },
        });
      },
      { timeout: 20_000, interval: 250 },
    );
    // The phone pings every half of the offline timer once its settings said so.
    await vi.waitFor(
      async () => {
        expect(await healthOf(client, 'phone')).toEqual({
          status: 'online',
          reasons: [],
          last_seen_at: expect.any(String),
          connection: 'stream',
          app_version: '1.68.0',
          battery: { level: 100, charging: true },
          signal: null,
        });
      },
      { timeout: 30_000, interval: 250 },
    );
  }, 120_000);

  it('announces device.offline once across two dispatchers within the setting after a phone is killed, then device.online once when it is back', async () => {
    const { e2e, cluster, db, user } = await setUp();
    const secret = generateWebhookSecret();
    const receiver = await startReceiver(e2e, secret);
    await db.webhook.create({
      data: { id: newId(), userId: user.id, url: receiver.url, events: ['device.offline', 'device.online', 'device.degraded'], secret },
    });
    const { code } = await createPairing(db, { userId: user.id, name: 'phone', ttlSeconds: 600 });
    const phoneEnv = { SIM_STATE_DIR: join(e2e.logDir, 'phone-state') };
    await cluster.startSim('phone', { protocol: 'sms-gate', pairings: [code] }, 1, phoneEnv);
    // Its first status is recorded by a sweep, without an event.
    await vi.waitFor(
      async () => {
        expect((await db.device.findFirstOrThrow({ where: { userId: user.id } })).healthStatus).toBe('online');
      },
      { timeout: 20_000, interval: 200 },
    );

    await cluster.kill('phone', 'SIGKILL');
    const killedAt = Date.now();

    await vi.waitFor(() => expect(receiver.arrivals.map((a) => a.type)).toContain('device.offline'), { timeout: 30_000, interval: 100 });
    const offline = receiver.arrivals.find((a) => a.type === 'device.offline')!;
    // Its last sign of life is the moment its stream closed (at most a keepalive before the kill).
    expect(offline.at - killedAt).toBeGreaterThanOrEqual((OFFLINE_AFTER_SECONDS - 1) * 1000);
    expect(offline.at - killedAt).toBeLessThanOrEqual((OFFLINE_AFTER_SECONDS + SWEEP_SECONDS + 3) * 1000);
    expect(offline).toMatchObject({ verified: true, data: { name: 'phone', health: { status: 'offline' } } });

    await cluster.startSim('phone', { protocol: 'sms-gate', pairings: [code] }, 1, phoneEnv);
    await vi.waitFor(() => expect(receiver.arrivals.map((a) => a.type)).toContain('device.online'), { timeout: 30_000, interval: 100 });
    const online = receiver.arrivals.find((a) => a.type === 'device.online')!;
    expect(online).toMatchObject({ verified: true, data: { name: 'phone', health: { status: 'online' } } });

    // Several sweeps of both dispatchers later (the phone pinged again, every 5 s): nothing more.
    await vi.waitFor(
      async () => {
        const { healthReportedAt } = await db.device.findFirstOrThrow({ where: { userId: user.id } });
        expect(healthReportedAt!.getTime()).toBeGreaterThan(online.at + 5000);
      },
      { timeout: 30_000, interval: 250 },
    );
    expect(receiver.arrivals.map((a) => a.type)).toEqual(['device.offline', 'device.online']);
    // Written once each, not only delivered once: one delivery row per announcement.
    const written = await db.webhookDelivery.findMany({ where: { userId: user.id }, select: { type: true }, orderBy: { occurredAt: 'asc' } });
    expect(written.map((d) => d.type)).toEqual(['device.offline', 'device.online']);
  }, 180_000);

  it('announces device.degraded with the reason quarantined within 10 s of the third retryable failure in a row, though the device was online a moment before', async () => {
    const { e2e, cluster, db, user, client } = await setUp({ QUARANTINE_AFTER_FAILURES: String(QUARANTINE_AFTER) });
    const secret = generateWebhookSecret();
    const receiver = await startReceiver(e2e, secret);
    await db.webhook.create({ data: { id: newId(), userId: user.id, url: receiver.url, events: ['device.online', 'device.degraded'], secret } });
    const { device, token } = await createDevice(db, { userId: user.id, name: 'no-service' });
    await cluster.startSim('no-service', { protocol: 'native', tokens: [token] }, 1, { SIM_RETRYABLE_FAILURE_RATE: '1' });
    // Online, and announced as such (its first status, without an event): the 5-minute dwell has just begun.
    await vi.waitFor(async () => expect((await db.device.findUniqueOrThrow({ where: { id: device.id } })).healthStatus).toBe('online'), {
      timeout: 20_000,
      interval: 100,
    });

    const recipients = Array.from({ length: QUARANTINE_AFTER }, (_, i) => `+1555300000${i}`);
    await client.send({ recipients, body: 'never leaves the phone' });
    const quarantinedAt = await vi.waitFor(
      async () => {
        const row = await db.device.findUniqueOrThrow({ where: { id: device.id } });
        expect(row.pauseReason).toBe('quarantined');
        return Date.now();
      },
      { timeout: 20_000, interval: 50 },
    );

    await vi.waitFor(() => expect(receiver.arrivals.map((a) => a.type)).toContain('device.degraded'), { timeout: 10_000, interval: 50 });
    const degraded = receiver.arrivals.find((a) => a.type === 'device.degraded')!;
    expect(degraded.at - quarantinedAt).toBeLessThanOrEqual(10_000);
    expect(degraded).toMatchObject({
      verified: true,
      data: { id: device.id, health: { status: 'degraded', reasons: expect.arrayContaining(['quarantined']) } },
    });
    expect(await healthOf(client, 'no-service')).toMatchObject({ status: 'degraded', reasons: expect.arrayContaining(['quarantined']) });
  }, 120_000);
});
