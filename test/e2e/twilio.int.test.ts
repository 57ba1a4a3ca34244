import { describe, expect, it, vi } from 'vitest';
import { twilioClient, validateRequest } from '@smsgw/api/testing/twilio';
import { createDevice, createPairing } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Twilio's published library against the real processes (API, two dispatchers) and simulated
 * devices of both protocols, a native device and an SMS Gate phone: messages created with the
 * Messaging Service SID reach `delivered` as the library reads them, each sent exactly once, and
 * their StatusCallback on loopback gets Twilio's `sent` and `delivered` callbacks, each accepted by
 * the library's `validateRequest` with the account's Auth Token.
 */
const openE2e = e2ePerTest('twilio');

interface Callback {
  url: string;
  signature: string;
  params: Record<string, string>;
}

/** A StatusCallback receiver: every POST's URL, signature and form parameters, answered 200. */
async function startReceiver(e2e: E2e): Promise<{ base: string; calls: Callback[] }> {
  const calls: Callback[] = [];
  const base = await e2e.listen((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      calls.push({ url: req.url ?? '', signature: String(req.headers['x-twilio-signature']), params: Object.fromEntries(new URLSearchParams(body)) });
      res.writeHead(200).end();
    });
  });
  return { base, calls };
}

describe('Twilio Messages API, end to end', () => {
  it('delivers messages created by the twilio library through a native device and an SMS Gate phone, each once, with signed status callbacks', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const { user, key } = await e2e.user('twilio-client');
    const native = await createDevice(db, { userId: user.id, name: 'native' });
    const pairing = await createPairing(db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
    const receiver = await startReceiver(e2e);
    const cluster = await e2e.startCluster({
      deviceTokens: [native.token],
      pairings: [pairing.code],
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
    });
    const response = await fetch(`${cluster.baseUrl}/api/v1/twilio`, { headers: { 'x-api-key': key } });
    const account = (await response.json()) as { account_sid: string; messaging_service_sid: string; auth_token: string };
    const client = twilioClient(cluster.baseUrl, account.account_sid, account.auth_token);
    await vi.waitFor(async () => expect(await db.device.count({ where: { userId: user.id } })).toBe(2), { timeout: 30_000 });

    const sids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const to = `+1555${String(200 + i).padStart(7, '0')}`;
      const statusCallback = `${receiver.base}/status?n=${i}`;
      sids.push((await client.messages.create({ to, body: `twilio ${i}`, messagingServiceSid: account.messaging_service_sid, statusCallback })).sid);
    }
    for (const sid of sids) {
      await vi.waitFor(async () => expect((await client.messages(sid).fetch()).status).toBe('delivered'), { timeout: 60_000, interval: 200 });
    }
    const fetched = await client.messages(sids[0]!).fetch();
    expect(fetched.dateSent).toBeInstanceOf(Date);

    const rows = await db.message.findMany({ where: { userId: user.id }, select: { id: true, deviceId: true } });
    expect(new Set(rows.map((r) => r.deviceId)).size).toBe(2);
    expect((await sentIds(e2e.logDir)).sort()).toEqual(rows.map((r) => r.id).sort());
    expect((await client.messages.list({ pageSize: 3 })).map((m) => m.status)).toEqual(Array(8).fill('delivered'));

    // Each message: one `sent` and one `delivered` callback, signed, naming the sender as the resource does.
    await vi.waitFor(() => expect(receiver.calls).toHaveLength(16), { timeout: 30_000, interval: 100 });
    const resources = new Map((await client.messages.list()).map((m) => [m.sid, m]));
    for (const call of receiver.calls) {
      expect(validateRequest(account.auth_token, call.signature, `${receiver.base}${call.url}`, call.params)).toBe(true);
      const resource = resources.get(call.params.MessageSid!)!;
      expect(call.params).toMatchObject({
        AccountSid: account.account_sid,
        MessagingServiceSid: account.messaging_service_sid,
        To: resource.to,
        ApiVersion: '2010-04-01',
        SmsSid: resource.sid,
      });
      expect(call.params.From).toBe(resource.from ?? undefined);
      expect(call.params.SmsStatus).toBe(call.params.MessageStatus);
    }
    const reported = receiver.calls.map((c) => `${c.params.MessageSid} ${c.params.MessageStatus}`).sort();
    expect(reported).toEqual(sids.flatMap((sid) => [`${sid} delivered`, `${sid} sent`]).sort());
  }, 120_000);
});
