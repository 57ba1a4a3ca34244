import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { twilioClient } from '@smsgw/api/testing/twilio';
import { createApiKey, createDb, createDevice, createPairing, createUser, type Db } from '@smsgw/db';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { sentIds, startCluster, type Cluster } from '../support/cluster.ts';

/**
 * Twilio's published library against the real processes (API, two dispatchers) and simulated
 * devices of both protocols, a native device and an SMS Gate phone: messages created with the
 * Messaging Service SID reach `delivered` as the library reads them, each sent exactly once.
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

describe('Twilio Messages API, end to end', () => {
  it('delivers messages created by the twilio library through a native device and an SMS Gate phone, each once', async () => {
    database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
    db = createDb({ url: database.url, poolSize: 2 });
    const user = await createUser(db, { name: 'twilio-client', monthlyQuota: 1000 });
    const { key } = await createApiKey(db, { userId: user.id, name: 'e2e' });
    const native = await createDevice(db, { userId: user.id, name: 'native' });
    const pairing = await createPairing(db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
    logDir = await mkdtemp(join(tmpdir(), 'smsgw-twilio-'));
    cluster = await startCluster({
      databaseUrl: database.url,
      queuePrefix: `smsgw-twilio-${randomBytes(4).toString('hex')}`,
      dispatchers: 2,
      deviceTokens: [native.token],
      pairings: [pairing.code],
      logDir,
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
    });
    const response = await fetch(`${cluster.baseUrl}/api/v1/twilio`, { headers: { 'x-api-key': key } });
    const account = (await response.json()) as { account_sid: string; messaging_service_sid: string; auth_token: string };
    const client = twilioClient(cluster.baseUrl, account.account_sid, account.auth_token);
    await vi.waitFor(async () => expect(await db!.device.count({ where: { userId: user.id } })).toBe(2), { timeout: 30_000 });

    const sids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const to = `+1555${String(200 + i).padStart(7, '0')}`;
      sids.push((await client.messages.create({ to, body: `twilio ${i}`, messagingServiceSid: account.messaging_service_sid })).sid);
    }
    for (const sid of sids) {
      await vi.waitFor(async () => expect((await client.messages(sid).fetch()).status).toBe('delivered'), { timeout: 60_000, interval: 200 });
    }
    const fetched = await client.messages(sids[0]!).fetch();
    expect(fetched.dateSent).toBeInstanceOf(Date);

    const rows = await db.message.findMany({ where: { userId: user.id }, select: { id: true, deviceId: true } });
    expect(new Set(rows.map((r) => r.deviceId)).size).toBe(2);
    expect((await sentIds(logDir)).sort()).toEqual(rows.map((r) => r.id).sort());
    expect((await client.messages.list({ pageSize: 3 })).map((m) => m.status)).toEqual(Array(8).fill('delivered'));
  }, 120_000);
});
