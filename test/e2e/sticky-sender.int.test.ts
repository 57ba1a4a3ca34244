import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createApiKey, createDb, createDevice, createUser, updateUserSettings, type Db } from '@smsgw/db';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { startCluster, type Cluster } from '../support/cluster.ts';

/**
 * Sticky sender with the real processes: one API, two dispatchers, two simulated phones in
 * processes of their own. A recipient's messages all go out through one phone; when that phone's
 * process is killed, the next goes through the other one, which then keeps the recipient.
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

describe('sticky sender, end to end', () => {
  it('keeps a recipient on one phone over 5 sends, falls back to the other when it dies, and sticks to that one', async () => {
    database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    db = createDb({ url: database.url, poolSize: 2 });
    const user = await createUser(db, { name: 'sticky', monthlyQuota: 1000 });
    await updateUserSettings(db, user.id, { stickySender: true });
    const { key } = await createApiKey(db, { userId: user.id, name: 'e2e' });
    const phones = [await createDevice(db, { userId: user.id, name: 'a' }), await createDevice(db, { userId: user.id, name: 'b' })];
    logDir = await mkdtemp(join(tmpdir(), 'smsgw-e2e-'));
    cluster = await startCluster({
      databaseUrl: database.url,
      queuePrefix: `smsgw-e2e-${randomBytes(4).toString('hex')}`,
      dispatchers: 2,
      logDir,
      env: { SWEEP_INTERVAL_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '1', DEVICE_AVAILABLE_SECONDS: '2' },
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
      if ((await res.json() as { available: boolean }).available === false) break;
      if (Date.now() > deadline) throw new Error('the killed phone still counts as available');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const after: string[] = [];
    for (let i = 0; i < 3; i++) after.push(await deliveredBy(`after ${i}`));
    expect(after).toEqual([other, other, other]);
  }, 180_000);
});
