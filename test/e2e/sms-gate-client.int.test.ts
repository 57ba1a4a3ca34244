import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { encryptValue, newerClient, publishedClient } from '@smsgw/api/testing/sms-gate';
import { createDevice, createPairing } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest } from '../support/e2e-fixture.ts';

/**
 * SMS Gate's client library against the real processes (API, two dispatchers) and simulated
 * devices of both protocols, a native device and an SMS Gate phone: messages sent by Basic and by
 * Bearer reach Delivered as the library reads them, each sent exactly once; an encrypted one goes to
 * the SMS Gate phone alone, as the ciphertexts the client made.
 */
const openE2e = e2ePerTest('gate-client');

/** A user with a native device and an SMS Gate phone, both connected. */
async function setUp(name: string) {
  const e2e = await openE2e();
  const { db, logDir } = e2e;
  const { user, key } = await e2e.user(name);
  const native = await createDevice(db, { userId: user.id, name: 'native' });
  const pairing = await createPairing(db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
  const cluster = await e2e.startCluster({
    deviceTokens: [native.token],
    pairings: [pairing.code],
    simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
  });
  return { db, logDir, user, key, native, cluster };
}

describe('SMS Gate client API, end to end', () => {
  it('delivers messages sent by Basic and by Bearer through a native device and an SMS Gate phone, each once', async () => {
    const { db, logDir, user, key, native, cluster } = await setUp('gate-client');
    const basic = publishedClient(cluster.baseUrl, user.name, key);
    const bearer = newerClient(cluster.baseUrl, '', key);
    await vi.waitFor(async () => expect(await basic.getDevices()).toHaveLength(2), { timeout: 30_000 });
    // The phone's SIMs as its app reported them (masked by the app), in SMS Gate's shape; the native device has none.
    const devices = await basic.getDevices();
    expect(devices.find((d) => d.id === native.device.id)).not.toHaveProperty('simCards');
    expect(devices.find((d) => d.id !== native.device.id)).toMatchObject({
      simCards: [{ slotIndex: 0, simNumber: 1, phoneNumber: expect.stringMatching(/^\*+\d{4}$/), carrierName: '****bile', iccid: expect.any(String) }],
    });

    const numbers = (n: number, from: number) => Array.from({ length: n }, (_, i) => `+1555${String(from + i).padStart(7, '0')}`);
    const byBasic = await basic.send({ message: 'by Basic', phoneNumbers: numbers(4, 0) });
    const byBearer = await bearer.send({ id: 'by-bearer', textMessage: { text: 'by Bearer' }, phoneNumbers: numbers(4, 100) });

    for (const read of [() => basic.getState(byBasic.id), () => bearer.getState(byBearer.id)]) {
      await vi.waitFor(async () => expect((await read()).state).toBe('Delivered'), { timeout: 60_000, interval: 200 });
      const state = await read();
      expect(state.recipients.map((r) => r.state)).toEqual(['Delivered', 'Delivered', 'Delivered', 'Delivered']);
      expect(Object.keys((state as unknown as { states: object }).states)).toEqual(expect.arrayContaining(['Pending', 'Sent', 'Delivered']));
    }

    const rows = await db.message.findMany({ where: { userId: user.id }, select: { id: true, deviceId: true } });
    expect(new Set(rows.map((r) => r.deviceId)).size).toBe(2);
    const sent = await sentIds(logDir);
    expect(sent.sort()).toEqual(rows.map((r) => r.id).sort());
    const listed = await bearer.listMessages({ state: 'Delivered' });
    expect(listed.headers.get('x-total-count')).toBe('2');
  }, 120_000);

  it('passes an encrypted message to the simulated SMS Gate phone byte for byte, never to the native device, and its Delivered back', async () => {
    const { db, logDir, user, key, native, cluster } = await setUp('gate-encrypted');
    const client = publishedClient(cluster.baseUrl, user.name, key);
    await vi.waitFor(async () => expect(await client.getDevices()).toHaveLength(2), { timeout: 30_000 });

    // As a client with SMS Gate's encryption sends it: every number and the text encrypted with the passphrase.
    const passphrase = 'the phone has it, smsgw never does';
    const numbers = Array.from({ length: 6 }, (_, i) => `+1555${String(200 + i).padStart(7, '0')}`);
    const ciphertexts = await Promise.all(numbers.map((n) => encryptValue(passphrase, n)));
    const request = { message: await encryptValue(passphrase, 'sealed'), phoneNumbers: ciphertexts, isEncrypted: true };
    const sent = await client.send(request);
    await vi.waitFor(async () => expect((await client.getState(sent.id)).state).toBe('Delivered'), { timeout: 60_000, interval: 200 });
    expect(await client.getState(sent.id)).toMatchObject({
      isEncrypted: true,
      recipients: ciphertexts.map((phoneNumber) => ({ phoneNumber, state: 'Delivered' })),
    });

    const rows = await db.message.findMany({ where: { userId: user.id }, select: { id: true, deviceId: true } });
    expect(rows.every((r) => r.deviceId !== null && r.deviceId !== native.device.id)).toBe(true);
    // What the simulated phone sent to: the ciphertexts as the client made them, each once.
    const log = (await readFile(join(logDir, 'sent.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: string; to: string });
    expect(log.map((l) => l.to).sort()).toEqual([...ciphertexts].sort());
    expect(log.map((l) => l.id).sort()).toEqual(rows.map((r) => r.id).sort());
  }, 120_000);
});
