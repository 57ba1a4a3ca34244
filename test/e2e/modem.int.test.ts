import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice } from '@smsgw/db';
// The scripted modem lives with the agent it tests; a relative path, as the root package does not depend on the agent.
import { FakeModem, PtyPair, readSubmit } from '../../apps/modem-agent/src/testing/fake-modem.ts';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest } from '../support/e2e-fixture.ts';

/**
 * A USB modem next to a phone (issue 12): the real API, one dispatcher, the modem agent as a real
 * process (dist/modem-agent.mjs) on a socat pseudo-terminal with a scripted modem in this process
 * (which answers every accepted part at once with a delivered status report, in the same write as
 * its +CMGS), and a simulated native phone.
 * 100 messages, half of them 2-part texts, go round-robin over both devices: every one delivered,
 * each part of each message submitted to the modem once, each phone message sent once.
 */
const openE2e = e2ePerTest('modem-e2e');

const SHORT = 'Your parcel is on its way.';
// GSM-7 over 160 characters: two concatenated parts.
const LONG =
  'Your parcel left our warehouse this morning and will reach you tomorrow between 9:00 and 13:00. Reply STOP to stop these updates; call us for any question about it!';

describe('a modem agent and a phone together', () => {
  it('delivers 100 messages round-robin over a USB modem and a phone, each part submitted once, none sent twice', async () => {
    const e2e = await openE2e();
    const { db, logDir: dir } = e2e;
    const { user, key } = await e2e.user('modem-e2e', 100_000);
    const modemDevice = await createDevice(db, { userId: user.id, name: 'modem' });
    const phoneDevice = await createDevice(db, { userId: user.id, name: 'phone' });

    // Torn down after the processes: the agent stops before its port vanishes.
    const pty = new PtyPair(dir);
    await pty.start();
    e2e.defer(() => pty.stop());
    const modem = await FakeModem.open(pty.modem, { deliverAfterMs: 0 });
    e2e.defer(() => modem.close());
    const cluster = await e2e.startCluster({
      dispatchers: 1,
      env: { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '2' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2' },
    });
    await cluster.startModemAgent(
      'modem',
      {
        MODEM_PORT: pty.agent,
        SMSGW_DEVICE_TOKEN: modemDevice.token,
        MODEM_STATE_FILE: join(dir, 'modem-state.json'),
        MODEM_COMMAND_TIMEOUT_MS: '2000',
        MODEM_SEND_TIMEOUT_MS: '5000',
        MODEM_POLL_SECONDS: '1',
        MODEM_RETRY_MAX_MS: '500',
        LOG_LEVEL: 'info',
      },
      1,
    );
    await cluster.startSim('phone', { protocol: 'native', tokens: [phoneDevice.token] }, 2);
    const client = new SmsgwClient(cluster.baseUrl, key);

    const ids: string[] = [];
    for (const [r, body] of [SHORT, LONG].entries()) {
      const recipients = Array.from({ length: 50 }, (_, i) => `+1555${String(r * 50 + i).padStart(7, '0')}`);
      ids.push(...(await client.send({ recipients, body })).message_ids);
    }
    expect(new Set(ids).size).toBe(100);

    const total = async (status: string) => (await client.listMessages({ status, limit: 1 })).total;
    await vi.waitFor(async () => expect((await total('delivered')) + (await total('failed'))).toBe(100), { timeout: 25_000, interval: 250 });
    const failures = await client.listMessages({ status: 'failed', limit: 5 });
    expect({ failed: failures.total, errors: failures.data.map((m) => m.error) }).toEqual({ failed: 0, errors: [] });

    const messages = await db.message.findMany({ where: { userId: user.id }, select: { id: true, to: true, deviceId: true, segments: true, body: true } });
    const viaModem = messages.filter((m) => m.deviceId === modemDevice.device.id);
    const viaPhone = messages.filter((m) => m.deviceId === phoneDevice.device.id);
    expect(viaModem.length + viaPhone.length).toBe(100);
    // Round-robin: 50 each, give or take one.
    expect(Math.abs(viaModem.length - viaPhone.length)).toBeLessThanOrEqual(1);
    // Both kinds of text reached the modem.
    expect(new Set(viaModem.map((m) => m.segments))).toEqual(new Set([1, 2]));

    // At the modem: exactly the parts of its messages, each once, with a status report requested.
    const submitted = modem.submitted.map((s) => readSubmit(s.pdu));
    const byRecipient = (list: { to: string; part: number; parts: number; text: string }[]) => list.map((p) => `${p.to} ${p.part}/${p.parts}`).sort();
    const expected = viaModem.flatMap((m) => Array.from({ length: m.segments }, (_, i) => ({ to: m.to, part: i + 1, parts: m.segments, text: m.body })));
    expect(byRecipient(submitted)).toEqual(byRecipient(expected));
    expect(submitted.every((p) => p.statusReport)).toBe(true);
    for (const m of viaModem) {
      expect(
        submitted
          .filter((p) => p.to === m.to)
          .sort((a, b) => a.part - b.part)
          .map((p) => p.text)
          .join(''),
      ).toBe(m.body);
    }

    // At the phone: its messages, each once; none of the modem's.
    const sentByPhone = await sentIds(dir);
    expect(sentByPhone).toHaveLength(viaPhone.length);
    expect(new Set(sentByPhone)).toEqual(new Set(viaPhone.map((m) => m.id)));

    // SIGTERM stops the agent within seconds, with exit code 0.
    const agent = cluster.processes.get('modem')!;
    const stopping = Date.now();
    const exited = new Promise<number | null>((resolve) => agent.once('exit', (code) => resolve(code)));
    agent.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(5000);
  }, 60_000);
});
