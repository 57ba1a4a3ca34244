import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, sendFootprint, startTestApi, uniquePhone, type TestApi, type TestUser } from '../../../testing/test-api.ts';

// Host names of dlr-urls resolve to a public address here; 127.0.0.1 stays internal.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MONTHLY_QUOTA_DEFAULT: '1000' }, { webhookResolver: async () => ['93.184.216.34'] });
});
afterAll(async () => {
  await api?.close();
});

const cgi = (params: Record<string, string>) =>
  `/cgi-bin/sendsms?${Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/%20/g, '+')}`)
    .join('&')}`;

function get(url: string) {
  return api.app.inject({ method: 'GET', url });
}

function credentials(user: TestUser) {
  return { username: user.user.name, password: user.apiKey };
}

async function messagesOf(userId: string) {
  return api.db.message.findMany({ where: { userId }, orderBy: { to: 'asc' }, include: { callback: true } });
}

describe('GET /cgi-bin/sendsms', () => {
  it('accepts a text to several numbers as one send: 202 "0: Accepted for delivery" in text/html', async () => {
    const user = await createTestUser(api.db);
    const [a, b] = [uniquePhone(), uniquePhone()];
    const res = await get(cgi({ ...credentials(user), to: `${a} 00${b.slice(1)}`, text: 'Hello Kannel €', from: 'ACME' }));

    expect(res.statusCode).toBe(202);
    expect(res.body).toBe('0: Accepted for delivery');
    expect(res.headers['content-type']).toBe('text/html');
    const messages = await messagesOf(user.userId);
    expect(messages.map((m) => [m.to, m.body, m.state])).toEqual(
      [
        [a, 'Hello Kannel €', 'pending'],
        [b, 'Hello Kannel €', 'pending'],
      ].sort(),
    );
    expect(new Set(messages.map((m) => m.batchId)).size).toBe(1);
    expect(messages.every((m) => m.callbackId === null)).toBe(true);
  });

  it('stores the dlr-url with the send, once, with the events its dlr-mask selects and what %P and %p need', async () => {
    const user = await createTestUser(api.db);
    const [a, b] = [uniquePhone(), uniquePhone()];
    const dlr = 'http://dlr.example/report?type=%d&to=%p&from=%P&at=%t';
    const res = await get(cgi({ ...credentials(user), to: `${a.slice(1)} ${b}`, text: 'hi', from: '+15550001', 'dlr-url': dlr, 'dlr-mask': '9' }));

    expect(res.statusCode).toBe(202);
    const messages = await messagesOf(user.userId);
    expect(new Set(messages.map((m) => m.callbackId)).size).toBe(1);
    expect(messages[0]!.callback).toMatchObject({
      url: dlr,
      format: 'kannel',
      events: ['sent', 'delivered'],
      context: { from: '+15550001', username: user.user.name, coding: 0, numbers: { [a]: a.slice(1) } },
    });
    expect(await api.db.messageCallback.count({ where: { userId: user.userId } })).toBe(1);
  });

  it('reads the text in its charset, and as UTF-16BE with coding=2', async () => {
    const user = await createTestUser(api.db);
    const latin = await get(`${cgi({ ...credentials(user), to: uniquePhone(), charset: 'ISO-8859-1' })}&text=Gr%FC%DFe`);
    const ucs2 = await get(`${cgi({ ...credentials(user), to: uniquePhone(), coding: '2' })}&text=%04%1F%04%40%04%38`);

    expect([latin.statusCode, ucs2.statusCode]).toEqual([202, 202]);
    expect((await messagesOf(user.userId)).map((m) => m.body).sort()).toEqual(['Grüße', 'При'].sort());
  });

  it('queues when no device is available now: 202 "3: Queued for later delivery", the message stored and charged', async () => {
    const user = await createTestUser(api.db, { devices: 0 });
    const res = await get(cgi({ ...credentials(user), to: uniquePhone(), text: 'later' }));

    expect([res.statusCode, res.body]).toEqual([202, '3: Queued for later delivery']);
    expect(await sendFootprint(api, user.userId)).toMatchObject({ messages: 1, quotaUsed: 1 });
  });
});

describe('POST /cgi-bin/sendsms', () => {
  it('takes the text as the body and the rest from X-Kannel-* headers, in the Content-Type charset', async () => {
    const user = await createTestUser(api.db);
    const to = uniquePhone();
    const res = await api.app.inject({
      method: 'POST',
      url: '/cgi-bin/sendsms',
      headers: {
        'content-type': 'text/plain; charset=ISO-8859-1',
        'x-kannel-username': user.user.name,
        'x-kannel-password': user.apiKey,
        'x-kannel-to': to,
        'x-kannel-dlr-url': 'http://dlr.example/?s=%d',
        'x-kannel-dlr-mask': '1',
      },
      payload: Buffer.from('Caf\xe9 posted', 'latin1'),
    });

    expect([res.statusCode, res.body]).toEqual([202, '0: Accepted for delivery']);
    const [message] = await messagesOf(user.userId);
    expect([message!.to, message!.body, message!.callback?.events]).toEqual([to, 'Café posted', ['delivered']]);
  });
});

describe('sendsms refusals: Kannel status and text, nothing stored or charged', () => {
  const cases: [
    what: string,
    request: (u: TestUser) => Record<string, string> | { post: Record<string, string>; body: string },
    status: number,
    text: string,
  ][] = [
    ['a wrong password', (u) => ({ username: u.user.name, password: 'smsgw_sk_wrong', to: uniquePhone(), text: 'x' }), 403, 'Authorization failed for sendsms'],
    ['another user name', (u) => ({ username: 'someone-else', password: u.apiKey, to: uniquePhone(), text: 'x' }), 403, 'Authorization failed for sendsms'],
    ['no credentials', () => ({ to: uniquePhone(), text: 'x' }), 403, 'Authorization failed for sendsms'],
    ['no to', (u) => ({ ...credentials(u), text: 'x' }), 400, 'Missing receiver number, rejected'],
    ['an empty to', (u) => ({ ...credentials(u), to: '', text: 'x' }), 400, 'Empty receiver number not allowed, rejected'],
    [
      'a number with letters',
      (u) => ({ ...credentials(u), to: `${uniquePhone()} 12ab34`, text: 'x' }),
      400,
      'Number(s) has/have been denied by white/black lists, or allowed/denied rules.',
    ],
    [
      'a national number',
      (u) => ({ ...credentials(u), to: '0301234567', text: 'x' }),
      400,
      'Number(s) has/have been denied by white/black lists, or allowed/denied rules.',
    ],
    ['no text', (u) => ({ ...credentials(u), to: uniquePhone() }), 400, 'Missing text, rejected'],
    ['an empty text', (u) => ({ ...credentials(u), to: uniquePhone(), text: '' }), 400, 'Empty text not allowed, rejected'],
    ['coding 1 (8-bit data)', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', coding: '1' }), 400, 'Coding field misformed, rejected'],
    ['coding 3', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', coding: '3' }), 400, 'Coding field misformed, rejected'],
    ['an unknown charset', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', charset: 'NOT-A-CHARSET' }), 400, 'Charset or body misformed, rejected'],
    ['a dlr-mask out of range', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', 'dlr-mask': '99' }), 400, 'DLR-Mask field misformed, rejected'],
    [
      'a dlr-url that is not http',
      (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', 'dlr-url': 'ftp://dlr.example/', 'dlr-mask': '1' }),
      400,
      'DLR-URL field misformed, rejected',
    ],
    [
      'a dlr-url to an internal address',
      (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', 'dlr-url': 'http://127.0.0.1/dlr', 'dlr-mask': '1' }),
      400,
      'DLR-URL not allowed: The address 127.0.0.1 is a loopback, private or otherwise internal address; webhooks must reach a public address, rejected',
    ],
    ['a udh', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', udh: '\x05\x00\x03\x01\x02\x01' }), 400, 'UDH not supported, rejected'],
    ['a validity below -1', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', validity: '-5' }), 400, 'Validity field misformed, rejected'],
    ['an unknown smsc (device)', (u) => ({ ...credentials(u), to: uniquePhone(), text: 'x', smsc: 'modem-7' }), 403, 'Not routable. Do not try again.'],
    [
      'a POST without X-Kannel-To',
      (u) => ({ post: { 'x-kannel-username': u.user.name, 'x-kannel-password': u.apiKey, 'content-type': 'text/plain' }, body: 'x' }),
      400,
      'Missing receiver(s) number(s), rejected',
    ],
    [
      'a POST of application/octet-stream',
      (u) => ({ post: { ...headersOf(u), 'content-type': 'application/octet-stream' }, body: 'x' }),
      400,
      'Coding field misformed, rejected',
    ],
    ['a POST of text/html', (u) => ({ post: { ...headersOf(u), 'content-type': 'text/html' }, body: '<b>x</b>' }), 415, 'Unsupported content-type, rejected'],
    ['a POST of JSON', (u) => ({ post: { ...headersOf(u), 'content-type': 'application/json' }, body: '{}' }), 400, 'Invalid content-type'],
  ];

  function headersOf(u: TestUser) {
    return { 'x-kannel-username': u.user.name, 'x-kannel-password': u.apiKey, 'x-kannel-to': uniquePhone() };
  }

  it.each(cases)('%s', async (_what, request, status, text) => {
    const user = await createTestUser(api.db);
    const before = await sendFootprint(api, user.userId);
    const spec = request(user);
    const res =
      'post' in spec
        ? await api.app.inject({ method: 'POST', url: '/cgi-bin/sendsms', headers: spec.post as Record<string, string>, payload: spec.body as string })
        : await get(cgi(spec));

    expect([res.statusCode, res.body]).toEqual([status, text]);
    expect(res.headers['content-type']).toBe('text/html');
    expect(await sendFootprint(api, user.userId)).toEqual(before);
    expect(await api.db.messageCallback.count({ where: { userId: user.userId } })).toBe(0);
  });

  it("answers an exhausted quota with 402 and Kannel's one line, charging nothing more", async () => {
    const user = await createTestUser(api.db, { monthlyQuota: 1 });
    const first = await get(cgi({ ...credentials(user), to: uniquePhone(), text: 'one' }));
    const before = await sendFootprint(api, user.userId);
    const res = await get(cgi({ ...credentials(user), to: uniquePhone(), text: 'two' }));

    expect(first.statusCode).toBe(202);
    expect([res.statusCode, res.body]).toEqual([402, 'Monthly message quota exceeded, rejected']);
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });

  it('does not send on HEAD', async () => {
    const user = await createTestUser(api.db);
    const res = await api.app.inject({ method: 'HEAD', url: cgi({ ...credentials(user), to: uniquePhone(), text: 'x' }) });

    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect((await sendFootprint(api, user.userId)).messages).toBe(0);
  });
});
