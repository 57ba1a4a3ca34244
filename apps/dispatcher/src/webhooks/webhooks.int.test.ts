import { pino } from 'pino';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import { generateWebhookSecret } from '@smsgw/core';
import { createTestUser, send, uniquePhone as phone, type TestApi } from '@smsgw/api/testing';
import { startDeviceSim } from '@smsgw/device-sim';
import { applyDeviceReports } from '../handlers/apply-reports.ts';
import { createWebhook, deliveries, payloads, report, sendingMessages, webhookTestbed, type Received } from '../testing/webhook-fixtures.ts';

/** Which events are written, what they carry and how they are signed. Attempts and targets: webhook-attempts.int.test.ts. */
const bed = webhookTestbed({ listen: true });
const { receiver, dispatcher } = bed;
let api: TestApi;
const log = pino({ level: 'silent' });
beforeAll(() => {
  api = bed.api;
});

async function deviceSim(token: string, env: Record<string, string> = {}): Promise<void> {
  const config = { SMSGW_URL: bed.baseUrl, DEVICE_TOKEN: token, SIM_SEND_MS: '0', SIM_DELIVER_MS: '0', LOG_LEVEL: 'silent', ...env };
  bed.track(await startDeviceSim(loadConfig(DeviceSimConfigSchema, config), log));
}

/** Waits until every delivery of the message is no longer pending, and returns them. */
async function settled(messageId: string, count: number) {
  await vi.waitFor(
    async () => {
      const rows = await deliveries(api, { messageId });
      expect(rows.map((d) => d.state).filter((s) => s !== 'pending')).toHaveLength(count);
    },
    { timeout: 15_000 },
  );
  return deliveries(api, { messageId });
}

function verify(secret: string, request: Received): unknown {
  return new StandardWebhook(secret).verify(request.body, request.headers as Record<string, string>);
}

async function messageRecord(apiKey: string, id: string): Promise<unknown> {
  const res = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { 'x-api-key': apiKey } });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('webhook payload and signature', () => {
  it('sends {type, timestamp, data: message record} as JSON, signed so that standardwebhooks verifies it, and only then', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    const { secret } = await createWebhook(api, user.userId, target.url, { events: ['message.sent', 'message.delivered'] });
    await dispatcher();
    await deviceSim(user.devices[0]!.token);
    const res = await send(api.app, user.apiKey, { recipients: [phone()], body: 'hello webhooks' });
    const [id] = res.json().message_ids as string[];

    const rows = await settled(id!, 2);
    expect(rows.map((d) => [d.type, d.state, d.attempts, d.lastStatusCode, d.nextAttemptAt]).sort()).toEqual([
      ['message.delivered', 'succeeded', 1, 204, null],
      ['message.sent', 'succeeded', 1, 204, null],
    ]);
    expect(target.received).toHaveLength(2);
    const record = (await messageRecord(user.apiKey, id!)) as Record<string, unknown>;
    for (const request of target.received) {
      const body = JSON.parse(request.body) as { type: string; timestamp: string; data: Record<string, unknown> };
      const row = rows.find((d) => d.type === body.type)!;
      expect(request.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': row.id });
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      expect(Object.keys(body).sort()).toEqual(['data', 'timestamp', 'type']);
      expect(verify(secret, request)).toEqual(body);
      // The record as the transition left it: the API's record, but at the state of the event.
      if (body.type === 'message.delivered') {
        expect(body.data).toEqual(record);
        expect(body.timestamp).toBe(record.delivered_at);
      } else {
        expect(body.data).toEqual({ ...record, status: 'sent', state: 'sent', delivered_at: null, updated_at: body.data.updated_at });
        expect(body.timestamp).toBe(record.sent_at);
      }
    }

    const [request] = target.received;
    const tampered = request!.body.replace('hello webhooks', 'hello webhookz');
    expect(tampered).not.toBe(request!.body);
    expect(() => verify(secret, { ...request!, body: tampered })).toThrow(/signature/i);
    expect(() => verify(generateWebhookSecret(), request!)).toThrow(/signature/i);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6 * 60_000 });
    try {
      expect(() => verify(secret, request!)).toThrow(/too old/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('signs with the previous secret too while it is valid, and with the current one alone once it expired', async () => {
    const user = await createTestUser(api.db);
    const rotating = await receiver();
    const expired = await receiver();
    const oldSecret = generateWebhookSecret();
    const current = await createWebhook(api, user.userId, rotating.url, {
      previousSecret: oldSecret,
      previousSecretExpiresAt: new Date(Date.now() + 3600_000),
    });
    const after = await createWebhook(api, user.userId, expired.url, { previousSecret: oldSecret, previousSecretExpiresAt: new Date(Date.now() - 1000) });
    const [id] = await sendingMessages(api, user);
    await dispatcher();
    await report(api, user, 'sent', [id!]);
    await settled(id!, 2);

    const [both] = rotating.received;
    expect(String(both!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(current.secret, both!)).toMatchObject({ type: 'message.sent' });
    expect(verify(oldSecret, both!)).toMatchObject({ type: 'message.sent' });

    const [one] = expired.received;
    expect(String(one!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(after.secret, one!)).toMatchObject({ type: 'message.sent' });
    expect(() => verify(oldSecret, one!)).toThrow(/signature/i);
  });
});

describe('webhook events', () => {
  it('emits message.failed when the device reports that sending failed', async () => {
    const user = await createTestUser(api.db);
    const target = await receiver();
    await createWebhook(api, user.userId, target.url);
    await dispatcher();
    await deviceSim(user.devices[0]!.token, { SIM_FAILURE_RATE: '1' });
    const [id] = (await send(api.app, user.apiKey, { recipients: [phone()], body: 'will fail' })).json().message_ids as string[];

    const rows = await settled(id!, 1);
    expect(rows.map((d) => [d.type, d.state])).toEqual([['message.failed', 'succeeded']]);
    expect(payloads(target)).toEqual([
      expect.objectContaining({ type: 'message.failed', data: expect.objectContaining({ id, status: 'failed', error: 'Simulated failure: no network' }) }),
    ]);
  });

  it('emits message.sent and message.delivered for a delivered report of a message still sending, once, to subscribed enabled endpoints only', async () => {
    const user = await createTestUser(api.db);
    const all = await receiver();
    const deliveredOnly = await receiver();
    const disabled = await receiver();
    const allHook = await createWebhook(api, user.userId, all.url);
    const deliveredHook = await createWebhook(api, user.userId, deliveredOnly.url, { events: ['message.delivered'] });
    const disabledHook = await createWebhook(api, user.userId, disabled.url, { enabled: false });
    const [id] = await sendingMessages(api, user);
    await dispatcher();

    await report(api, user, 'delivered', [id!]);

    const rows = await settled(id!, 3);
    const byEndpoint = (webhookId: string) =>
      rows
        .filter((d) => d.webhookId === webhookId)
        .map((d) => [d.type, d.state])
        .sort();
    expect(byEndpoint(allHook.id)).toEqual([
      ['message.delivered', 'succeeded'],
      ['message.sent', 'succeeded'],
    ]);
    expect(byEndpoint(deliveredHook.id)).toEqual([['message.delivered', 'succeeded']]);
    expect(byEndpoint(disabledHook.id)).toEqual([]);
    expect(
      payloads(all)
        .map((p) => [p.type, p.data.id])
        .sort(),
    ).toEqual([
      ['message.delivered', id],
      ['message.sent', id],
    ]);
    expect(payloads(deliveredOnly).map((p) => p.type)).toEqual(['message.delivered']);
    expect(disabled.received).toEqual([]);

    // The same report again, and a late `sent`, move nothing and write no delivery.
    for (const status of ['delivered', 'sent'] as const) {
      const again = await applyDeviceReports(api.sql, [
        { deviceId: user.devices[0]!.id, receivedAt: new Date().toISOString(), reports: [{ id: id!, status }] },
      ]);
      expect(again).toEqual({ applied: [], deliveries: [] });
    }
    expect((await deliveries(api, { messageId: id! })).map((d) => d.id).sort()).toEqual(rows.map((d) => d.id).sort());
  });

  it("sends a user's events to that user's endpoints only", async () => {
    const [a, b] = [await createTestUser(api.db), await createTestUser(api.db)];
    const [toA, toB] = [await receiver(), await receiver()];
    const hookA = await createWebhook(api, a.userId, toA.url);
    const hookB = await createWebhook(api, b.userId, toB.url);
    const idsA = await sendingMessages(api, a, 2);
    const idsB = await sendingMessages(api, b, 1);
    await dispatcher();

    await report(api, a, 'sent', idsA);
    await report(api, b, 'sent', idsB);

    for (const id of [...idsA, ...idsB]) await settled(id, 1);
    expect(
      payloads(toA)
        .map((p) => p.data.id)
        .sort(),
    ).toEqual([...idsA].sort());
    expect(payloads(toB).map((p) => p.data.id)).toEqual(idsB);
    const rows = await api.db.webhookDelivery.findMany({ where: { webhookId: { in: [hookA.id, hookB.id] } } });
    expect(rows.map((d) => [d.webhookId, d.userId]).sort()).toEqual(
      [
        [hookA.id, a.userId],
        [hookA.id, a.userId],
        [hookB.id, b.userId],
      ].sort(),
    );
  });
});
