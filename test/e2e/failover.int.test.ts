import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice, createPairing } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Failover without double sends through the real processes (docs/devices.md, "Failover"): the API,
 * two dispatchers, native simulated devices and an SMS Gate phone, some failing before sending.
 */
const openE2e = e2ePerTest('failover');

const ENV = { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '1', MAX_SEND_ATTEMPTS: '3', QUARANTINE_AFTER_FAILURES: '3' };
const SIM_ENV = { SIM_SEND_MS: '1', SIM_DELIVER_MS: '0', SIM_POLL_SECONDS: '1', SIM_RECONNECT_MS: '500', SIM_RETRY_MS: '500' };
const NATIVE_RETRYABLE = 'Simulated failure before sending: no service';
const ANDROID_NO_SERVICE = 'Send result: RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)';

async function userWith(e2e: E2e, name: string, devices: string[]) {
  const { user, key } = await e2e.user(name, 10_000);
  const tokens: Record<string, { id: string; token: string }> = {};
  for (const device of devices) {
    const { device: row, token } = await createDevice(e2e.db, { userId: user.id, name: device });
    tokens[device] = { id: row.id, token };
  }
  return { userId: user.id, client: new SmsgwClient(e2e.cluster.baseUrl, key), devices: tokens };
}

async function allFinal({ db }: E2e, userId: string, count: number): Promise<void> {
  await vi.waitFor(async () => expect(await db.message.count({ where: { userId, state: { in: ['delivered', 'failed'] } } })).toBe(count), {
    timeout: 40_000,
    interval: 250,
  });
}

describe('failover through the real processes', () => {
  it('never hands a message to two devices unless the first failed it before sending; retries land elsewhere; final failures stay final; quarantine', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const cluster = await e2e.startCluster({ env: ENV, simEnv: SIM_ENV });
    // Three users, each with a round-robin of their own: a flaky phone among good ones, a phone whose
    // failures may have left it, and an SMS Gate phone that never has service.
    const fleet = await userWith(e2e, 'fleet', ['flaky', 'good-1', 'good-2']);
    const lossy = await userWith(e2e, 'lossy', ['lossy', 'good-3']);
    const gate = await userWith(e2e, 'gate', ['good-4']);
    const good = [fleet.devices['good-1']!, fleet.devices['good-2']!, lossy.devices['good-3']!, gate.devices['good-4']!].map((d) => d.token);
    await cluster.startSim('good', { protocol: 'native', tokens: good }, 4);
    await cluster.startSim('flaky', { protocol: 'native', tokens: [fleet.devices.flaky!.token] }, 5, { SIM_RETRYABLE_FAILURE_RATE: '0.3' });
    await cluster.startSim('lossy', { protocol: 'native', tokens: [lossy.devices.lossy!.token] }, 6, { SIM_FAILURE_RATE: '1' });
    const { code } = await createPairing(db, { userId: gate.userId, name: 'no-service', ttlSeconds: 600 });
    await cluster.startSim('phone', { protocol: 'sms-gate', pairings: [code] }, 7, { SIM_RETRYABLE_FAILURE_RATE: '1' });
    const phoneId = (await db.device.findFirstOrThrow({ where: { userId: gate.userId, protocol: 'sms_gate' } })).id;

    // 1,000 messages over the fleet, the flaky phone failing 30 % of its share before sending.
    const recipients = Array.from({ length: 1000 }, (_, i) => `+1555${String(2_000_000 + i).padStart(7, '0')}`);
    await fleet.client.send({ recipients, body: 'failover at scale' });
    // The lossy user's round-robin: what its phone fails is final.
    await lossy.client.send({ recipients: recipients.slice(0, 6), body: 'may have left' });
    // The SMS Gate user: round-robin first (the phone's share goes to the good device), then one named to the phone.
    await gate.client.send({ recipients: recipients.slice(0, 4), body: 'no service here' });
    await allFinal(e2e, gate.userId, 4);
    const named = (await gate.client.send({ recipients: [recipients[10]!], body: 'named', device_id: phoneId })).message_ids[0]!;
    await Promise.all([allFinal(e2e, fleet.userId, 1000), allFinal(e2e, lossy.userId, 6), allFinal(e2e, gate.userId, 5)]);

    const sent = await sentIds(e2e.logDir);
    expect(new Set(sent).size).toBe(sent.length);

    // The fleet: every message delivered, once, by a device it never failed on; each hand-over follows a retryable failure.
    const rows = await db.$queryRawUnsafe<
      { id: string; state: string; device_id: string; attempts: { device_id: string; error: string }[]; assigned: number; pending: number; failovers: number }[]
    >(
      `SELECT m.id, m.state, m.device_id, m.attempts,
         (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.state = 'assigned') AS assigned,
         (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.state = 'pending') AS pending,
         (SELECT count(*)::int FROM message_events e WHERE e.message_id = m.id AND e.state = 'pending' AND e.detail LIKE 'Failed before sending%') AS failovers
       FROM messages m WHERE m.user_id = $1::uuid`,
      fleet.userId,
    );
    expect(rows.filter((r) => r.state === 'delivered')).toHaveLength(1000);
    const fleetIds = new Set(rows.map((r) => r.id));
    expect(sent.filter((id) => fleetIds.has(id))).toHaveLength(1000);
    for (const row of rows) {
      expect(row.assigned - row.pending).toBe(1);
      expect(row.attempts).toHaveLength(row.failovers);
      for (const attempt of row.attempts) expect(attempt).toMatchObject({ device_id: fleet.devices.flaky!.id, error: NATIVE_RETRYABLE });
      expect(row.attempts.map((a) => a.device_id)).not.toContain(row.device_id);
      expect(new Set(row.attempts.map((a) => a.device_id)).size).toBe(row.attempts.length);
    }
    const failedOver = rows.filter((r) => r.failovers > 0);
    expect(failedOver.length).toBeGreaterThan(20);
    const record = await fleet.client.getMessage(failedOver[0]!.id);
    expect(record.attempts).toEqual([
      { device_id: fleet.devices.flaky!.id, error: NATIVE_RETRYABLE, at: expect.any(String) },
      { device_id: failedOver[0]!.device_id, error: null, at: record.sent_at },
    ]);

    // The lossy phone's failures are final: never handed to the good device.
    const lossyRows = await db.message.findMany({ where: { userId: lossy.userId } });
    const onLossy = lossyRows.filter((m) => m.deviceId === lossy.devices.lossy!.id);
    expect(onLossy.length).toBeGreaterThan(0);
    for (const m of onLossy) expect([m.state, m.error, m.attempts]).toEqual(['failed', 'Simulated failure: no network', []]);
    expect(await db.messageEvent.count({ where: { messageId: { in: onLossy.map((m) => m.id) }, state: 'assigned' } })).toBe(onLossy.length);

    // The SMS Gate phone: its round-robin share was sent by the good device, listing the phone's Android error first.
    const gateRows = await db.message.findMany({ where: { userId: gate.userId } });
    const rescued = gateRows.filter((m) => m.id !== named && (m.attempts as unknown[]).length > 0);
    expect(rescued.length).toBeGreaterThan(0);
    for (const m of rescued) {
      expect(m).toMatchObject({ state: 'delivered', deviceId: gate.devices['good-4']!.id, attempts: [{ device_id: phoneId, error: ANDROID_NO_SERVICE }] });
    }
    // Named to the phone, its failure is final.
    expect(await db.message.findUniqueOrThrow({ where: { id: named } })).toMatchObject({ state: 'failed', deviceId: phoneId, error: ANDROID_NO_SERVICE });

    // Three retryable failures in a row (QUARANTINE_AFTER_FAILURES) quarantined the phone: degraded, out of round-robin.
    expect((await db.device.findUniqueOrThrow({ where: { id: phoneId } })).pauseReason).toBe('quarantined');
    const { data } = await gate.client.listDevices();
    expect((data.find((d) => d.id === phoneId) as unknown as { health: { status: string; reasons: string[] } }).health).toMatchObject({
      status: 'degraded',
      reasons: expect.arrayContaining(['quarantined']),
    });
    const after = await gate.client.send({ recipients: recipients.slice(20, 24), body: 'while quarantined' });
    await allFinal(e2e, gate.userId, 9);
    for (const id of after.message_ids) expect(await db.message.findUniqueOrThrow({ where: { id } })).toMatchObject({ state: 'delivered', attempts: [] });
  }, 120_000);
});
