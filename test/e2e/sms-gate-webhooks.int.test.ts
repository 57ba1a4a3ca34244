import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { newerClient, publishedClient } from '@smsgw/api/testing/sms-gate';
import { createDevice, createPairing } from '@smsgw/db';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * SMS Gate-format webhooks from the real processes (API, dispatcher) and simulated devices of both
 * protocols: a native device that sends, one whose sends all fail, and an SMS Gate phone that sends
 * and receives SMS. Registered with SMS Gate's published library; each delivery verified with
 * upstream's JS recipe.
 */
const openE2e = e2ePerTest('gate-hooks');

/** docs-web `features/webhooks.md`, "JavaScript": upstream's verifier, as its users run it. */
function verifySignature(secretKey: string, payload: string, timestamp: string, signature: string) {
  const message = payload + timestamp;
  const expectedSignature = createHmac('sha256', secretKey).update(message).digest('hex');
  return expectedSignature === signature;
}

type Envelope = { deviceId: string; event: string; id: string; payload: Record<string, unknown>; webhookId: string };

/** A receiver on 127.0.0.1 that keeps every request and answers 200. */
async function receiver(e2e: E2e): Promise<{ url: string; got: { headers: IncomingHttpHeaders; body: string }[] }> {
  const got: { headers: IncomingHttpHeaders; body: string }[] = [];
  const base = await e2e.listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  return { url: `${base}/hook`, got };
}

describe('SMS Gate-format webhooks, end to end', () => {
  it('reports sent, delivered, failed, received and ping from a native device, a failing one and an SMS Gate phone, signed', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const { user, key } = await e2e.user('gate-hooks');
    const native = await createDevice(db, { userId: user.id, name: 'native' });
    const failing = await createDevice(db, { userId: user.id, name: 'failing' });
    const pairing = await createPairing(db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
    const cluster = await e2e.startCluster({
      dispatchers: 1,
      deviceTokens: [native.token],
      pairings: [pairing.code],
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.2,0.2,0.2' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1', SIM_INBOUND_EVERY_MS: '1000' },
    });
    await cluster.startSim('failing', { protocol: 'native', tokens: [failing.token] }, 3, { SIM_FAILURE_RATE: '1' });
    const phone = (await db.device.findFirstOrThrow({ where: { userId: user.id, name: { notIn: ['native', 'failing'] } } })).id;

    const target = await receiver(e2e);
    const client = publishedClient(cluster.baseUrl, user.name, key);
    const register = (event: string, deviceId?: string) =>
      client.registerWebhook({ id: `hook-${event}`, url: target.url, event, ...(deviceId && { deviceId }) } as Parameters<typeof client.registerWebhook>[0]);
    for (const event of ['sms:sent', 'sms:delivered', 'sms:failed']) await register(event);
    await register('sms:received', phone);
    await register('system:ping', native.device.id);
    expect(await client.getWebhooks()).toHaveLength(5);

    const bearer = newerClient(cluster.baseUrl, '', key);
    for (const [id, deviceId] of [
      ['to-native', native.device.id],
      ['to-phone', phone],
      ['to-failing', failing.device.id],
    ] as const) {
      await bearer.send({
        id,
        deviceId,
        textMessage: { text: `hello ${id}` },
        phoneNumbers: [`+1555${String(randomBytes(3).readUIntBE(0, 3) % 10_000_000).padStart(7, '0')}`],
      });
    }

    const settings = async () => (await db.smsGateSettings.findUniqueOrThrow({ where: { userId: user.id } })).settings as { webhooks: { signing_key: string } };
    const key_ = (await settings()).webhooks.signing_key;
    const envelopes = () =>
      target.got.map((r) => {
        expect(verifySignature(key_, r.body, String(r.headers['x-timestamp']), String(r.headers['x-signature']))).toBe(true);
        return JSON.parse(r.body) as Envelope;
      });
    const seen = (event: string, messageId?: string) =>
      envelopes().filter((e) => e.event === event && (messageId === undefined || e.payload.messageId === messageId));
    await vi.waitFor(
      () => {
        for (const id of ['to-native', 'to-phone']) {
          expect(seen('sms:sent', id)).toHaveLength(1);
          expect(seen('sms:delivered', id)).toHaveLength(1);
        }
        expect(seen('sms:failed', 'to-failing')).toHaveLength(1);
        expect(seen('sms:received').length).toBeGreaterThan(0);
        expect(seen('system:ping').length).toBeGreaterThan(0);
      },
      { timeout: 60_000, interval: 250 },
    );

    expect(seen('sms:sent', 'to-native')[0]).toMatchObject({ deviceId: native.device.id, webhookId: 'hook-sms:sent', payload: { partsCount: 1 } });
    expect(seen('sms:delivered', 'to-phone')[0]!.deviceId).toBe(phone);
    expect(seen('sms:failed', 'to-failing')[0]).toMatchObject({ deviceId: failing.device.id, payload: { reason: 'Simulated failure: no network' } });
    expect(seen('sms:failed', 'to-native').concat(seen('sms:failed', 'to-phone'))).toEqual([]);
    // The filters: received SMS of the phone only, pings of the native device only.
    expect(new Set(seen('sms:received').map((e) => e.deviceId))).toEqual(new Set([phone]));
    expect(seen('sms:received')[0]!.payload).toMatchObject({ sender: expect.stringMatching(/^\+1555/), message: expect.stringMatching(/^inbound /) });
    expect(new Set(seen('system:ping').map((e) => e.deviceId))).toEqual(new Set([native.device.id]));
    expect(seen('system:ping')[0]!.payload).toMatchObject({ health: { status: 'pass', checks: { 'battery:level': { observedValue: 100 } } } });
  }, 120_000);
});
