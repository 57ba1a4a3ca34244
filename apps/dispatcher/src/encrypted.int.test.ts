import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { appDate, SmsGateClient } from '@smsgw/client';
import { DispatcherConfigSchema, loadConfig } from '@smsgw/config';
import { assignMessages, createDevice, createPairing } from '@smsgw/db';
import { call, createTestUser, uniquePhone as phone, type TestUser } from '@smsgw/api/testing';
import { decryptAsApp, encryptValue, publishedClient } from '@smsgw/api/testing/sms-gate';
import { assignDevices } from '@smsgw/assign';
import { announceDeps } from './handlers/announce-deps.ts';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';

/**
 * Encrypted SMS Gate messages with the dispatcher: only SMS Gate phones can decrypt them, so only
 * they are ever given one (round-robin, failover), while plain messages go to every device; and a
 * message the client library encrypted comes back Delivered from the phone that decrypted it.
 */
const harness = useDispatcherTestApi();
const PASSPHRASE = 'shared by the client and the phone, never by smsgw';

function deps() {
  const { config: api } = harness.api;
  const config = loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.DATABASE_URL,
    REDIS_URL: api.REDIS_URL,
    QUEUE_PREFIX: api.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
  });
  const resources = {
    sql: harness.api.sql,
    redis: harness.api.app.redis,
    webhooksQueue: harness.api.app.webhooksQueue,
    config,
    log: pino({ level: 'silent' }),
  };
  return { ...resources, announce: announceDeps(resources) };
}

/** A ciphertext-shaped string (routing never reads it). */
const opaque = () => `$aes-256-cbc/pbkdf2-sha1$i=1000$${randomBytes(16).toString('base64')}$${randomBytes(16).toString('base64')}`;

/** A user with `natives` native devices and `phones` SMS Gate phones, all available; phones sorted by id. */
async function fleet(natives: number, phones: number): Promise<TestUser & { phones: string[] }> {
  const u = await createTestUser(harness.api.db, { devices: natives });
  const ids: string[] = [];
  for (let i = 0; i < phones; i++) {
    const { device } = await createDevice(harness.api.db, { userId: u.userId, name: `gate-${i}` });
    await harness.api.db.device.update({ where: { id: device.id }, data: { protocol: 'sms_gate', lastSeenAt: new Date() } });
    ids.push(device.id);
  }
  return { ...u, phones: ids.sort() };
}

/** An SMS Gate send through inject; returns its message ids in order. */
async function gateSend(u: TestUser, body: Record<string, unknown>): Promise<string[]> {
  const res = await harness.api.app.inject({ method: 'POST', url: '/3rdparty/v1/messages', headers: { authorization: `Bearer ${u.apiKey}` }, payload: body });
  expect(res.statusCode).toBe(202);
  const rows = await harness.api.db.message.findMany({
    where: { batch: { userId: u.userId, externalId: res.json().id } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => r.id);
}

const encrypted = (count: number) => ({ textMessage: { text: opaque() }, phoneNumbers: Array.from({ length: count }, opaque), isEncrypted: true });
const devicesOf = async (ids: string[]) =>
  (await harness.api.db.message.findMany({ where: { id: { in: ids } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })).map((m) => m.deviceId);

describe('encrypted messages, end to end with the dispatcher', () => {
  it('carries a message the client encrypted to the SMS Gate phone, never the native device, and its Delivered back', async () => {
    const u = await createTestUser(harness.api.db, { devices: 1 });
    const baseUrl = await harness.api.app.listen({ host: '127.0.0.1', port: 0 });
    const gate = new SmsGateClient(`${baseUrl}/mobile/v1`);
    const { code } = await createPairing(harness.api.db, { userId: u.userId, ttlSeconds: 600 });
    const registered = await gate.register({ auth: { code }, name: 'Google/sdk_gphone64' });
    await gate.patchDevice({ id: registered.id });
    await harness.start();

    const numbers = [phone(), phone(), phone()];
    const text = 'Ihr Code: 424242. Grüße ✓';
    const ciphertexts = await Promise.all(numbers.map((n) => encryptValue(PASSPHRASE, n)));
    const cText = await encryptValue(PASSPHRASE, text);
    const library = publishedClient(baseUrl, u.user.name, u.apiKey);
    // The served library's Message type predates `isEncrypted`; it sends the request as given.
    const request = { id: null, message: cText, phoneNumbers: ciphertexts, ttl: null, simNumber: null, withDeliveryReport: true, isEncrypted: true };
    const sent = await library.send(request);

    const items = await vi.waitFor(
      async () => {
        const pulled = await gate.pull('fifo');
        expect(pulled).toHaveLength(3);
        return pulled;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(
      items
        .map((i) => ({ numbers: i.phoneNumbers, text: i.textMessage?.text, message: i.message, isEncrypted: i.isEncrypted }))
        .sort((a, b) => ciphertexts.indexOf(a.numbers[0]!) - ciphertexts.indexOf(b.numbers[0]!)),
    ).toEqual(ciphertexts.map((c) => ({ numbers: [c], text: cText, message: cText, isEncrypted: true })));
    const plain = items.map((i) => ({ to: decryptAsApp(PASSPHRASE, i.phoneNumbers[0]!), text: decryptAsApp(PASSPHRASE, i.textMessage!.text) }));
    expect(plain.sort((a, b) => a.to.localeCompare(b.to))).toEqual(numbers.sort().map((to) => ({ to, text })));

    // As the app reports: each recipient by the very string it was given, Sent and then Delivered.
    const at = (s: number) => appDate(new Date(Date.now() + s), '+03:00');
    for (const state of ['Sent', 'Delivered'] as const) {
      for (const item of items) {
        const recipients = [{ phoneNumber: item.phoneNumbers[0]!, state }];
        await gate.patchMessages([
          { id: item.id, state, recipients, states: { Pending: at(0), Processed: at(1), Sent: at(2), ...(state === 'Delivered' && { Delivered: at(3) }) } },
        ]);
      }
    }
    await vi.waitFor(async () => expect((await library.getState(sent.id)).state).toBe('Delivered'), { timeout: 15_000, interval: 100 });
    expect(await library.getState(sent.id)).toMatchObject({
      id: sent.id,
      isEncrypted: true,
      recipients: ciphertexts.map((phoneNumber) => ({ phoneNumber, state: 'Delivered' })),
    });
    const rows = await harness.api.db.message.findMany({ where: { userId: u.userId } });
    expect(rows.map((r) => r.deviceId)).toEqual([registered.id, registered.id, registered.id]);
  });
});

describe('routing of encrypted messages', () => {
  it('gives them to the SMS Gate phones alone, round-robin, while plain messages go to every device', async () => {
    const u = await fleet(2, 2);
    const secret = await gateSend(u, encrypted(6));
    const open = await gateSend(u, { message: 'plain', phoneNumbers: Array.from({ length: 8 }, phone) });
    expect(await assignDevices(deps(), [...secret, ...open])).toEqual([...secret, ...open].map(() => 'assigned'));

    const secretDevices = await devicesOf(secret);
    expect(new Set(secretDevices)).toEqual(new Set(u.phones));
    expect(u.phones.map((p) => secretDevices.filter((d) => d === p).length)).toEqual([3, 3]);
    expect(new Set(await devicesOf(open))).toEqual(new Set([...u.devices.map((d) => d.id), ...u.phones]));
  });

  it('lets them wait while the SMS Gate phone is away, the native device available; the phone back, it gets them', async () => {
    const u = await fleet(1, 1);
    const ids = await gateSend(u, encrypted(2));
    await harness.api.db.device.update({ where: { id: u.phones[0]! }, data: { lastSeenAt: new Date(0) } });
    expect(await assignDevices(deps(), ids)).toEqual(['no_device', 'no_device']);
    expect(await devicesOf(ids)).toEqual([null, null]);

    await harness.api.db.device.update({ where: { id: u.phones[0]! }, data: { lastSeenAt: new Date() } });
    expect(await assignDevices(deps(), ids)).toEqual(['assigned', 'assigned']);
    expect(await devicesOf(ids)).toEqual([u.phones[0], u.phones[0]]);
  });

  it('fails over to another SMS Gate phone only, and waits when the phone it failed on was the only one', async () => {
    const u = await fleet(2, 2);
    const [a, b] = u.phones as [string, string];
    const ids = await gateSend(u, encrypted(4));
    const failedOn = (device: string) => [{ device_id: device, error: 'RESULT_ERROR_NO_SERVICE', at: new Date().toISOString() }];
    await harness.api.db.message.updateMany({ where: { id: { in: ids } }, data: { attempts: failedOn(a) } });
    expect(await assignDevices(deps(), ids)).toEqual(ids.map(() => 'assigned'));
    expect(await devicesOf(ids)).toEqual(ids.map(() => b));

    const [alone] = await gateSend(u, encrypted(1));
    await harness.api.db.message.update({ where: { id: alone! }, data: { attempts: [...failedOn(a), ...failedOn(b)] } });
    expect(await assignDevices(deps(), [alone!])).toEqual(['no_device']);
  });

  it('never makes an encrypted recipient sticky, and never lets a statement give one to a native device', async () => {
    const u = await fleet(1, 1);
    expect((await call(harness.api.app, u.apiKey, 'PATCH', '/api/v1/settings', { sticky_sender: true })).statusCode).toBe(200);
    const ids = await gateSend(u, encrypted(2));
    expect(await assignDevices(deps(), ids)).toEqual(['assigned', 'assigned']);
    expect(await harness.api.db.stickySender.count({ where: { userId: u.userId } })).toBe(0);

    const [other] = await gateSend(u, encrypted(1));
    expect(await assignMessages(harness.api.sql, { assignments: [{ id: other!, deviceId: u.deviceId! }], now: new Date() })).toEqual([]);
    expect(await harness.api.db.message.findUniqueOrThrow({ where: { id: other! } })).toMatchObject({ state: 'pending', deviceId: null });
  });
});
