import { describe, expect, it, vi } from 'vitest';
import { createDevice, createPairing } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';

/**
 * Kannel's sendsms over the real processes, driven as Kannel clients drive it: plain HTTP
 * requests (there is no Kannel client library), a GET with every variable in the query and a
 * POST with the text as its body and the rest in X-Kannel-* headers, to a native simulated device
 * and a simulated SMS Gate phone. A dlr-url receiver on loopback gets Kannel's GET per report
 * that the dlr-mask selects, with the escape codes filled in and URL-encoded.
 */
const openE2e = e2ePerTest('kannel');

/** A dlr-url receiver: every request's method and raw URL, answered 200 as a Kannel application would. */
async function startReceiver(e2e: E2e): Promise<{ base: string; calls: { method: string; url: string }[] }> {
  const calls: { method: string; url: string }[] = [];
  const base = await e2e.listen((req, res) => {
    calls.push({ method: req.method ?? '', url: req.url ?? '' });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
  });
  return { base, calls };
}

/** The raw query of a dlr call as name → value, still URL-encoded as Kannel sent it. */
function rawQuery(url: string): Record<string, string> {
  return Object.fromEntries(
    url
      .slice(url.indexOf('?') + 1)
      .split('&')
      .map((pair) => pair.split('=') as [string, string]),
  );
}

const AT = /^\d{4}-\d{2}-\d{2}\+\d{2}:\d{2}:\d{2}$/;

describe('Kannel sendsms end to end', () => {
  it('sends GET and POST requests through both device protocols, each message once, and calls dlr-url per dlr-mask', async () => {
    const e2e = await openE2e();
    const { db } = e2e;
    const { user, key } = await e2e.user('kannel-user');
    const native = await createDevice(db, { userId: user.id, name: 'native' });
    const failing = await createDevice(db, { userId: user.id, name: 'failing' });
    const pairing = await createPairing(db, { userId: user.id, name: 'phone', ttlSeconds: 600 });
    const receiver = await startReceiver(e2e);
    const cluster = await e2e.startCluster({
      dispatchers: 1,
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', DEVICE_HEARTBEAT_SECONDS: '1' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2' },
      deviceTokens: [native.token],
      pairings: [pairing.code],
    });
    const sendsms = `${cluster.baseUrl}/cgi-bin/sendsms`;

    // GET: three numbers (one as 00…, one without +), sent (8) and delivered (1) reports.
    const get = [`+1555${randomDigits()}`, `001555${randomDigits()}`, `1555${randomDigits()}`];
    const dlrGet = `${receiver.base}/dlr?ref=get-42&type=%d&to=%p&from=%P&at=%t&reply=%A&id=%I`;
    const query = new URLSearchParams({
      username: 'kannel-user',
      password: key,
      to: get.join(' '),
      text: 'Kannel GET ✓',
      from: 'ACME Corp',
      'dlr-url': dlrGet,
      'dlr-mask': '9',
    });
    const getRes = await fetch(`${sendsms}?${query}`);
    expect([getRes.status, await getRes.text()]).toEqual([202, '0: Accepted for delivery']);

    // POST: the text as the body, the rest in headers; only delivered reports (1).
    const post = [`+1555${randomDigits()}`, `+1555${randomDigits()}`];
    const postRes = await fetch(sendsms, {
      method: 'POST',
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'x-kannel-username': 'kannel-user',
        'x-kannel-password': key,
        'x-kannel-to': post.join(' '),
        'x-kannel-dlr-url': `${receiver.base}/dlr?ref=post&type=%d&to=%p`,
        'x-kannel-dlr-mask': '1',
      },
      body: 'Kannel POST',
    });
    expect([postRes.status, await postRes.text()]).toEqual([202, '0: Accepted for delivery']);

    const ids = (await db.message.findMany({ where: { userId: user.id }, select: { id: true } })).map((m) => m.id);
    expect(ids).toHaveLength(5);
    await vi.waitFor(async () => expect(await db.message.count({ where: { userId: user.id, state: 'delivered' } })).toBe(5), {
      timeout: 60_000,
      interval: 200,
    });
    const sent = await sentIds(e2e.logDir);
    expect(sent.sort()).toEqual([...ids].sort());
    const devices = await db.message.groupBy({ by: ['deviceId'], where: { userId: user.id }, _count: { _all: true } });
    expect(devices.length).toBe(2);

    // Each GET message: one type-8 and one type-1 call; each POST message: one type-1 call.
    const byRef = (ref: string) => receiver.calls.filter((c) => rawQuery(c.url).ref === ref);
    await vi.waitFor(() => expect(byRef('get-42').length + byRef('post').length).toBe(get.length * 2 + post.length), { timeout: 30_000, interval: 100 });
    expect(receiver.calls.every((c) => c.method === 'GET')).toBe(true);
    const getCalls = byRef('get-42').map((c) => rawQuery(c.url));
    for (const number of get) {
      const mine = getCalls.filter((q) => q.to === encodeURIComponent(number));
      expect(mine.map((q) => q.type).sort()).toEqual(['1', '8']);
      for (const q of mine) {
        expect(q.from).toBe('ACME+Corp');
        expect(q.at).toMatch(AT);
        expect(q.reply).toBe(q.type === '8' ? 'ACK%2F' : 'DELIVRD');
        expect(ids).toContain(q.id);
      }
    }
    const postCalls = byRef('post').map((c) => rawQuery(c.url));
    expect(postCalls.map((q) => [q.type, decodeURIComponent(q.to!)]).sort()).toEqual(post.map((n) => ['1', n]).sort());

    // A message no device can send (the failing simulator, named as smsc): type 16 with smsgw's reason.
    await cluster.startSim('failing', { protocol: 'native', tokens: [failing.token] }, 3, { SIM_FAILURE_RATE: '1' });
    const failQuery = new URLSearchParams({
      username: 'kannel-user',
      password: key,
      to: `+1555${randomDigits()}`,
      text: 'will fail',
      smsc: failing.device.id,
      'dlr-url': `${receiver.base}/dlr?ref=fail&type=%d&reply=%A`,
      'dlr-mask': '31',
    });
    const failRes = await fetch(`${sendsms}?${failQuery}`);
    expect(failRes.status).toBe(202);
    await vi.waitFor(() => expect(byRef('fail')).toHaveLength(1), { timeout: 30_000, interval: 100 });
    expect(rawQuery(byRef('fail')[0]!.url)).toMatchObject({ type: '16', reply: 'NACK%2FSimulated+failure%3A+no+network' });

    // Refusals over the wire: Kannel's status and text, never a 5xx, nothing stored.
    const before = await db.message.count({ where: { userId: user.id } });
    const refusals = await Promise.all([
      fetch(`${sendsms}?${new URLSearchParams({ username: 'kannel-user', password: 'smsgw_sk_nope', to: '+15550000001', text: 'x' })}`),
      fetch(`${sendsms}?${new URLSearchParams({ username: 'kannel-user', password: key, text: 'x' })}`),
      fetch(`${sendsms}?${new URLSearchParams({ username: 'kannel-user', password: key, to: '+15550000001' })}`),
      fetch(`${sendsms}?${new URLSearchParams({ username: 'kannel-user', password: key, to: 'not-a-number', text: 'x' })}`),
      fetch(`${sendsms}?${new URLSearchParams({ username: 'kannel-user', password: key, to: '+15550000001', text: 'x', coding: '1' })}`),
    ]);
    expect(await Promise.all(refusals.map(async (r) => [r.status, await r.text()]))).toEqual([
      [403, 'Authorization failed for sendsms'],
      [400, 'Missing receiver number, rejected'],
      [400, 'Missing text, rejected'],
      [400, 'Number(s) has/have been denied by white/black lists, or allowed/denied rules.'],
      [400, 'Coding field misformed, rejected'],
    ]);
    expect(await db.message.count({ where: { userId: user.id } })).toBe(before);
  }, 180_000);
});

function randomDigits(): string {
  return String(Math.floor(Math.random() * 1e7)).padStart(7, '0');
}
