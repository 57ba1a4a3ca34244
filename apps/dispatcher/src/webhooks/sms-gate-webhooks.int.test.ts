import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createTestUser, uniquePhone as phone, type TestApi, type TestUser } from '@smsgw/api/testing';
import { newerClient, publishedClient } from '@smsgw/api/testing/sms-gate';
import { smsGateSettings, storeSmsGateSettings } from '@smsgw/db';
import { report, toSending, webhookTestbed, type Receiver } from '../testing/webhook-fixtures.ts';

/**
 * SMS Gate-format webhooks (docs/compatibility.md) registered with SMS Gate's published library on a
 * listening smsgw, written by the transitions' statements and delivered by the one engine: each
 * delivery arrives in SMS Gate's envelope, verified with upstream's JS recipe.
 */
const bed = webhookTestbed({ listen: true });

/** docs-web `features/webhooks.md`, "JavaScript": upstream's verifier, as its users run it. */
function verifySignature(secretKey: string, payload: string, timestamp: string, signature: string) {
  const message = payload + timestamp;
  const expectedSignature = createHmac('sha256', secretKey).update(message).digest('hex');
  return expectedSignature === signature;
}

type Envelope = { deviceId: string; event: string; id: string; payload: Record<string, unknown>; webhookId: string };

/** What a receiver got, each checked against `key` (upstream's recipe, ±5 minutes). */
function verified(target: Receiver, key: string): Envelope[] {
  return target.received.map((r) => {
    const timestamp = String(r.headers['x-timestamp']);
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
    expect(r.headers['content-type']).toBe('application/json');
    expect(verifySignature(key, r.body, timestamp, String(r.headers['x-signature']))).toBe(true);
    return JSON.parse(r.body) as Envelope;
  });
}

const signingKey = async (api: TestApi, userId: string) => String((await smsGateSettings(api.sql, userId)).webhooks!.signing_key);

/** An SMS the user's `n`-th device received, through the native device protocol. */
async function inbound(api: TestApi, user: TestUser, n = 0, at = new Date()): Promise<void> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/api/v1/device/inbound',
    headers: { authorization: `Bearer ${user.devices[n]!.token}` },
    payload: { messages: [{ from: '+15557654321', to: '+15550000001', message: `hello ${n}`, sim_number: 2, received_at: at.toISOString() }] },
  });
  expect(res.statusCode).toBe(202);
}

const register = (client: ReturnType<typeof publishedClient>, hook: { id?: string; deviceId?: string | null; url: string; event: string }) =>
  // 3.0.0's types predate `sms:cancelled`; the call is the library's as it is.
  client.registerWebhook(hook as Parameters<typeof client.registerWebhook>[0]);

describe('SMS Gate-format webhooks', () => {
  it("registers and lists with the library; sent, delivered, failed, cancelled and received arrive in SMS Gate's envelope, signed", async () => {
    const api = bed.api;
    const user = await createTestUser(api.db);
    const client = publishedClient(bed.baseUrl, user.user.name, user.apiKey);
    const target = await bed.receiver(() => 200);
    const events = ['sms:sent', 'sms:delivered', 'sms:failed', 'sms:cancelled', 'sms:received'];
    for (const event of events)
      expect(await register(client, { id: `hook-${event}`, url: target.url, event })).toEqual({ id: `hook-${event}`, deviceId: null, url: target.url, event });
    expect((await client.getWebhooks()).map((w) => w.event).sort()).toEqual([...events].sort());
    // smsgw's own API neither lists nor touches them.
    const own = await api.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: { 'x-api-key': user.apiKey } });
    expect(own.json().total).toBe(0);

    const bearer = newerClient(bed.baseUrl, '', user.apiKey);
    const [ok, bad] = [phone(), phone()];
    await bearer.send({ id: 'order-1', textMessage: { text: 'Your order' }, phoneNumbers: [ok, bad], simNumber: 1 });
    const rows = await api.db.message.findMany({ where: { userId: user.userId }, orderBy: { to: 'asc' } });
    const idOf = (to: string) => rows.find((m) => m.to === to)!.id;
    await toSending(
      api,
      user,
      rows.map((m) => m.id),
    );
    await bearer.send({ id: 'later', textMessage: { text: 'Later' }, phoneNumbers: [phone()], scheduleAt: new Date(Date.now() + 3_600_000).toISOString() });
    await bed.dispatcher();
    await report(api, user, 'sent', [idOf(ok)]);
    await report(api, user, 'failed', [idOf(bad)]);
    await vi.waitFor(async () => expect((await api.db.message.findUniqueOrThrow({ where: { id: idOf(ok) } })).state).toBe('sent'), { timeout: 10_000 });
    await report(api, user, 'delivered', [idOf(ok)]);
    await bearer.cancelMessage('later');
    await inbound(api, user);

    await vi.waitFor(() => expect(target.received).toHaveLength(5), { timeout: 15_000 });
    const got = verified(target, await signingKey(api, user.userId));
    const by = (event: string) => got.find((e) => e.event === event)!;
    const deviceId = user.devices[0]!.id;
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(by('sms:sent')).toEqual({
      deviceId,
      event: 'sms:sent',
      id: expect.any(String),
      webhookId: 'hook-sms:sent',
      payload: { messageId: 'order-1', phoneNumber: ok, recipient: ok, simNumber: 1, partsCount: 1, sentAt: at },
    });
    expect(by('sms:delivered').payload).toEqual({ messageId: 'order-1', phoneNumber: ok, recipient: ok, simNumber: 1, deliveredAt: at });
    expect(by('sms:failed').payload).toEqual({ messageId: 'order-1', phoneNumber: bad, recipient: bad, simNumber: 1, failedAt: at, reason: 'test failure' });
    expect(by('sms:cancelled')).toMatchObject({ deviceId: '', payload: { messageId: 'later', cancelledAt: at } });
    expect(by('sms:received')).toMatchObject({
      deviceId,
      webhookId: 'hook-sms:received',
      payload: {
        messageId: expect.any(String),
        phoneNumber: '+15557654321',
        sender: '+15557654321',
        recipient: '+15550000001',
        simNumber: 2,
        message: 'hello 0',
        receivedAt: at,
      },
    });
    expect(new Set(got.map((e) => e.id)).size).toBe(5);
  });

  it('applies the device filter, replaces a webhook registered again with its id, and sends nothing more once it is deleted', async () => {
    const api = bed.api;
    const user = await createTestUser(api.db, { devices: 2 });
    const client = publishedClient(bed.baseUrl, user.user.name, user.apiKey);
    const [first, second, control] = [await bed.receiver(() => 200), await bed.receiver(() => 200), await bed.receiver(() => 200)];
    await register(client, { id: 'only-1', deviceId: user.devices[1]!.id, url: first.url, event: 'sms:received' });
    await register(client, { id: 'control', url: control.url, event: 'sms:received' });
    await bed.dispatcher();

    await inbound(api, user, 0);
    await inbound(api, user, 1);
    await vi.waitFor(() => expect(control.received).toHaveLength(2), { timeout: 15_000 });
    await vi.waitFor(() => expect(first.received.map((r) => JSON.parse(r.body).deviceId)).toEqual([user.devices[1]!.id]), { timeout: 15_000 });

    expect(await register(client, { id: 'only-1', url: second.url, event: 'sms:received' })).toEqual({
      id: 'only-1',
      deviceId: null,
      url: second.url,
      event: 'sms:received',
    });
    expect((await client.getWebhooks()).map((w) => w.id).sort()).toEqual(['control', 'only-1']);
    await inbound(api, user, 0);
    await vi.waitFor(() => expect(control.received).toHaveLength(3), { timeout: 15_000 });
    await vi.waitFor(() => expect(second.received).toHaveLength(1), { timeout: 15_000 });

    await client.deleteWebhook('only-1');
    expect((await client.getWebhooks()).map((w) => w.id)).toEqual(['control']);
    await inbound(api, user, 1);
    await vi.waitFor(async () => expect(await api.db.webhookDelivery.count({ where: { userId: user.userId, state: 'pending' } })).toBe(0), { timeout: 15_000 });
    expect([first.received.length, second.received.length, control.received.length]).toEqual([1, 1, 4]);
  });

  it('signs with the key the settings hold when the delivery is made', async () => {
    const api = bed.api;
    const user = await createTestUser(api.db);
    const target = await bed.receiver(() => 200);
    await register(publishedClient(bed.baseUrl, user.user.name, user.apiKey), { url: target.url, event: 'sms:received' });
    await bed.dispatcher();
    const before = await signingKey(api, user.userId);
    await inbound(api, user);
    await vi.waitFor(() => expect(target.received).toHaveLength(1), { timeout: 15_000 });
    verified(target, before);

    await storeSmsGateSettings(api.sql, user.userId, { webhooks: { signing_key: 'changed-in-settings' } });
    await inbound(api, user);
    await vi.waitFor(() => expect(target.received).toHaveLength(2), { timeout: 15_000 });
    const last = target.received[1]!;
    expect(verifySignature('changed-in-settings', last.body, String(last.headers['x-timestamp']), String(last.headers['x-signature']))).toBe(true);
    expect(verifySignature(before, last.body, String(last.headers['x-timestamp']), String(last.headers['x-signature']))).toBe(false);
  });

  it("pings system:ping on a device's health report, at most once per ping interval of the settings", async () => {
    const api = bed.api;
    const user = await createTestUser(api.db, { devices: 2 });
    const target = await bed.receiver(() => 200);
    await register(publishedClient(bed.baseUrl, user.user.name, user.apiKey), { deviceId: user.devices[0]!.id, url: target.url, event: 'system:ping' });
    await storeSmsGateSettings(api.sql, user.userId, { ...(await smsGateSettings(api.sql, user.userId)), ping: { interval_seconds: 1 } });
    await bed.dispatcher();
    const heartbeat = (n: number) =>
      api.app.inject({
        method: 'POST',
        url: '/api/v1/device/heartbeat',
        headers: { authorization: `Bearer ${user.devices[n]!.token}` },
        payload: { battery_level: 20, charging: false },
      });
    for (let i = 0; i < 3; i++) {
      await heartbeat(0);
      await heartbeat(1);
    }
    await vi.waitFor(() => expect(target.received).toHaveLength(1), { timeout: 15_000 });
    // A second later the interval has passed: the next report pings again.
    await vi.waitFor(
      async () => {
        await heartbeat(0);
        expect(target.received.length).toBeGreaterThanOrEqual(2);
      },
      { timeout: 15_000, interval: 300 },
    );
    const [ping] = verified(target, await signingKey(api, user.userId));
    expect(ping).toMatchObject({
      deviceId: user.devices[0]!.id,
      event: 'system:ping',
      payload: {
        health: {
          status: 'warn',
          checks: {
            'battery:level': { description: 'Battery level in percent', observedUnit: 'percent', observedValue: 20, status: 'warn' },
            'battery:charging': { observedValue: 0, status: 'pass' },
            'connection:status': { observedValue: 1, status: 'pass' },
          },
        },
      },
    });
  });
});
