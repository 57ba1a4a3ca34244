import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice } from '@smsgw/db';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';
import { startRelay } from '../support/relay.ts';

/**
 * Phones whose event stream died, through the real processes (docs/devices.md, "Availability"):
 * a phone whose process is killed (its sockets close) is not chosen once the grace has passed, and
 * a phone that left coverage (no FIN, the API's writes still accepted) is found dead and is
 * unavailable within DEVICE_OFFLINE_AFTER_SECONDS.
 */
const openE2e = e2ePerTest('dead-streams');

const SIM_ENV = { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };

async function setUp(env: Record<string, string>, liveDevices: number) {
  const e2e = await openE2e();
  const { user, key } = await e2e.user('dead-streams', 100_000);
  const tokens = async (prefix: string, count: number) =>
    Promise.all(Array.from({ length: count }, async (_, i) => (await createDevice(e2e.db, { userId: user.id, name: `${prefix}-${i}` })).token));
  const cluster = await e2e.startCluster({
    simEnv: SIM_ENV,
    env: { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '1', ...env },
    deviceTokens: await tokens('live', liveDevices),
  });
  return { e2e, cluster, client: new SmsgwClient(cluster.baseUrl, key), tokens, userId: user.id };
}

async function sendRoundRobin(client: SmsgwClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 100) {
    const recipients = Array.from({ length: Math.min(100, count - done) }, (_, i) => `+1555${String(done + i).padStart(7, '0')}`);
    ids.push(...(await client.send({ recipients, body: `round-robin ${done}` })).message_ids);
  }
  return ids;
}

/** Every assignment of the messages, by device name: the message history keeps each one. */
async function assignmentsByDevice({ db }: E2e, ids: string[]): Promise<Record<string, number>> {
  const events = await db.messageEvent.findMany({ where: { messageId: { in: ids }, state: 'assigned' }, select: { deviceId: true } });
  const names = new Map((await db.device.findMany({ select: { id: true, name: true } })).map((d) => [d.id, d.name]));
  const counts: Record<string, number> = {};
  for (const { deviceId } of events) counts[names.get(deviceId!)!] = (counts[names.get(deviceId!)!] ?? 0) + 1;
  return counts;
}

async function waitDelivered(client: SmsgwClient, count: number): Promise<void> {
  await vi.waitFor(async () => expect((await client.listMessages({ status: 'delivered', limit: 1 })).total).toBe(count), { timeout: 60_000, interval: 250 });
}

describe('a phone whose stream closed', () => {
  it('is not chosen once the grace has passed, though its keepalive + grace has not', { timeout: 180_000 }, async () => {
    // Keepalive 6 s, grace 6 s: a close counted as a refresh kept the phone for 12 s; the grace is 6.
    const GRACE_SECONDS = 6;
    const { e2e, cluster, client, tokens } = await setUp({ DEVICE_HEARTBEAT_SECONDS: '6', DEVICE_STREAM_GRACE_SECONDS: String(GRACE_SECONDS) }, 2);
    await cluster.startSim('doomed', { protocol: 'native', tokens: await tokens('dead', 2) }, 4);

    await cluster.kill('doomed', 'SIGKILL');
    const killedAt = Date.now();
    // The phones' sockets closed with the process; wait past the grace, well inside keepalive + grace.
    await sleep(killedAt + (GRACE_SECONDS + 2) * 1000 - Date.now());
    const ids = await sendRoundRobin(client, 300);
    expect(Date.now() - killedAt).toBeLessThan(11_000);

    await waitDelivered(client, 300);
    const assigned = await assignmentsByDevice(e2e, ids);
    expect(Object.keys(assigned).sort()).toEqual(['live-0', 'live-1']);
    expect(assigned['live-0']! + assigned['live-1']!).toBe(300);
  });
});

describe('a phone that left coverage', () => {
  it('is found dead and unavailable within DEVICE_OFFLINE_AFTER_SECONDS, and then not chosen', { timeout: 180_000 }, async () => {
    const OFFLINE_AFTER_SECONDS = 10;
    const { e2e, cluster, client, tokens } = await setUp(
      { DEVICE_HEARTBEAT_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '2', DEVICE_OFFLINE_AFTER_SECONDS: String(OFFLINE_AFTER_SECONDS) },
      1,
    );
    const relay = await startRelay(new URL(cluster.baseUrl));
    // Its requests would hang in the relay, and a stopped process never ends on SIGTERM.
    e2e.defer(() => relay.close());
    await cluster.startSim('frozen', { protocol: 'native', tokens: await tokens('frozen', 1) }, 2, { SMSGW_URL: relay.url });
    e2e.defer(() => cluster.signal('frozen', 'SIGCONT'));
    const record = async () => (await client.listDevices()).data.find((d) => d.name === 'frozen-0')!;
    // It heartbeats through the relay (SIM_POLL_SECONDS), so it is a device that reports.
    await vi.waitFor(async () => expect((await record()).health).toMatchObject({ status: 'online', battery: { level: expect.any(Number) } }), {
      timeout: 20_000,
    });

    cluster.signal('frozen', 'SIGSTOP');
    relay.stopForwarding();
    const frozenAt = Date.now();
    // Before: the API's keepalives were accepted and refreshed the stream for as long as TCP
    // retransmits (many minutes); the phone stayed available.
    await vi.waitFor(async () => expect(await record()).toMatchObject({ available: false, connection: null }), {
      timeout: OFFLINE_AFTER_SECONDS * 3000,
      interval: 200,
    });
    // Its last heartbeat came before the freeze; a poll interval and a request of slack for the look.
    expect(Date.now() - frozenAt).toBeLessThanOrEqual(OFFLINE_AFTER_SECONDS * 1000 + 1000);
    expect(cluster.output('api').join('\n')).toContain('device event stream dead');

    const ids = await sendRoundRobin(client, 100);
    await waitDelivered(client, 100);
    expect(await assignmentsByDevice(e2e, ids)).toEqual({ 'live-0': 100 });
    // The health rules announce it offline (the sweep judges it unavailable).
    await vi.waitFor(async () => expect((await record()).health.status).toBe('offline'), { timeout: 10_000 });
  });
});
