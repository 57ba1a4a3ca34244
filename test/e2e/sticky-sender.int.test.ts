import { describe, expect, it } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice, updateUserSettings } from '@smsgw/db';
import { e2ePerTest } from '../support/e2e-fixture.ts';

/**
 * Sticky sender with the real processes: one API, two dispatchers, two simulated phones in
 * processes of their own. A recipient's messages all go out through one phone; when that phone's
 * process is killed, the next goes through the other one, which then keeps the recipient.
 */
const openE2e = e2ePerTest('sticky');

describe('sticky sender, end to end', () => {
  it('keeps a recipient on one phone over 5 sends, falls back to the other when it dies, and sticks to that one', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const { user, key } = await e2e.user('sticky');
    await updateUserSettings(db, user.id, { stickySender: true });
    const phones = [await createDevice(db, { userId: user.id, name: 'a' }), await createDevice(db, { userId: user.id, name: 'b' })];
    // A closed stream counts for the grace or a keepalive, whichever is longer (15 s by default): short
    // ones, so that the killed phone is soon unavailable.
    const cluster = await e2e.startCluster({
      env: { SWEEP_INTERVAL_SECONDS: '1', DEVICE_HEARTBEAT_SECONDS: '2', DEVICE_STREAM_GRACE_SECONDS: '2', DEVICE_AVAILABLE_SECONDS: '2' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
    });
    await cluster.startSim('sim-0', { protocol: 'native', tokens: [phones[0]!.token] }, 1);
    await cluster.startSim('sim-1', { protocol: 'native', tokens: [phones[1]!.token] }, 2);
    const client = new SmsgwClient(cluster.baseUrl, key);
    const to = '+15550001234';

    const deliveredBy = async (body: string): Promise<string> => {
      const [id] = (await client.send({ recipients: [to], body })).message_ids;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const message = await client.getMessage(id!);
        if (message.status === 'delivered') return message.device_id!;
        if (message.status === 'failed' || Date.now() > deadline) throw new Error(`message ${body}: ${message.status} ${message.error ?? ''}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    const first: string[] = [];
    for (let i = 0; i < 5; i++) first.push(await deliveredBy(`sticky ${i}`));
    expect(new Set(first).size).toBe(1);
    const sticky = first[0]!;
    const stickyIndex = phones.findIndex((p) => p.device.id === sticky);
    const other = phones[1 - stickyIndex]!.device.id;

    await cluster.kill(`sim-${stickyIndex}`, 'SIGKILL');
    // Sent before smsgw sees the phone gone, a message would wait for the assignment lease instead.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await fetch(`${cluster.baseUrl}/api/v1/devices/${sticky}`, { headers: { 'x-api-key': key } });
      if (((await res.json()) as { available: boolean }).available === false) break;
      if (Date.now() > deadline) throw new Error('the killed phone still counts as available');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const after: string[] = [];
    for (let i = 0; i < 3; i++) after.push(await deliveredBy(`after ${i}`));
    expect(after).toEqual([other, other, other]);
  }, 180_000);
});
