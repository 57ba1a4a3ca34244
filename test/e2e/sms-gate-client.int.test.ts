import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { newerClient, publishedClient } from '@smsgw/api/testing/sms-gate';
import { createApiKey, createDb, createDevice, createPairing, createUser, type Db } from '@smsgw/db';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { sentIds, startCluster, type Cluster } from '../support/cluster.ts';

/**
 * SMS Gate's client library against the real processes (API, two dispatchers) and simulated
 * devices of both protocols, a native device and an SMS Gate phone: messages sent by Basic and by
 * Bearer reach Delivered as the library reads them, each sent exactly once.
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

describe('SMS Gate client API, end to end', () => {
  it('delivers messages sent by Basic and by Bearer through a native device and an SMS Gate phone, each once', async () => {
    database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    db = createDb({ url: database.url, poolSize: 2 });
    const user = await createUser(db, { name: 'gate-client', monthlyQuota: 1000 });
    const { key } = await createApiKey(db, { userId: user.id, name: 'e2e' });
    const native = await createDevice(db, { userId: user.id, name: 'native' });
    const pairing = await createPairing(db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
    logDir = await mkdtemp(join(tmpdir(), 'smsgw-gate-client-'));
    cluster = await startCluster({
      databaseUrl: database.url,
      queuePrefix: `smsgw-gate-client-${randomBytes(4).toString('hex')}`,
      dispatchers: 2,
      deviceTokens: [native.token],
      pairings: [pairing.code],
      logDir,
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
    });
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
});
