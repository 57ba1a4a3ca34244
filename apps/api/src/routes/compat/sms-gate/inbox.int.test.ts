import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { newerClient, publishedClient } from '../../../testing/sms-gate-client.ts';
import { enrolPhone, phoneRequest, signedHeaders, type EnrolledPhone } from '../../../testing/test-phone.ts';

/**
 * `GET /3rdparty/v1/inbox` and `GET /3rdparty/v1/logs` against a listening smsgw, as client-ts
 * (`listInboxMessages`, the published `getLogs`) and client-go send them. The SMS are stored by
 * the phones' own signed `sms:received` webhooks, as real phones deliver them.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

/** A phone of `u` that receives SMS: each is POSTed to its webhook as the app does. */
async function receivingPhone(u: TestUser) {
  const phone: EnrolledPhone = await enrolPhone(api.app, api.db, u.userId);
  const auth = { authorization: `Bearer ${phone.token}` };
  const [webhook] = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
  const key: string = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json().webhooks.signing_key;
  let n = 0;
  return {
    id: phone.id,
    async receive(payload: Record<string, unknown>) {
      const body = JSON.stringify({
        id: randomUUID().slice(0, 21),
        webhookId: webhook.id,
        event: 'sms:received',
        deviceId: phone.id,
        payload: { messageId: (++n).toString(16), receivedAt: new Date(Date.now() - n * 1000).toISOString(), ...payload },
      });
      const res = await phoneRequest(api.app, 'POST', new URL(webhook.url).pathname, { raw: body, headers: signedHeaders(key, body) });
      if (res.statusCode >= 300) throw new Error(`inbound answered ${res.statusCode}: ${res.body}`);
    },
  };
}

async function inbox(client: ReturnType<typeof newerClient>, options: Parameters<ReturnType<typeof newerClient>['listInboxMessages']>[0] = {}) {
  const res = await client.listInboxMessages(options);
  return { status: res.status, total: res.headers.get('x-total-count'), body: (await res.json()) as Record<string, unknown>[] };
}

describe('GET /3rdparty/v1/inbox', () => {
  it("lists the SMS the user's phones received as IncomingMessage, newest first, with X-Total-Count and paging", async () => {
    const u = await createTestUser(api.db, { devices: 0 });
    const [a, b] = [await receivingPhone(u), await receivingPhone(u)];
    await a.receive({ message: 'first', sender: '+15557650001', recipient: '+15551230000', simNumber: 2 });
    await b.receive({ message: 'second', sender: '+15557650002' });
    await a.receive({ message: 'third', phoneNumber: '+15557650003' });
    const stranger = await receivingPhone(await createTestUser(api.db, { devices: 0 }));
    await stranger.receive({ message: 'not yours', sender: '+15557650009' });

    const client = newerClient(baseUrl, '', u.apiKey);
    const all = await inbox(client);
    expect([all.status, all.total]).toEqual([200, '3']);
    expect(all.body.map((m) => m.contentPreview)).toEqual(['third', 'second', 'first']);
    const stored = await api.db.receivedMessage.findFirstOrThrow({ where: { body: 'first', deviceId: a.id } });
    expect(all.body[2]).toEqual({
      id: stored.id,
      type: 'SMS',
      sender: '+15557650001',
      recipient: '+15551230000',
      simNumber: 2,
      contentPreview: 'first',
      createdAt: stored.receivedAt.toISOString(),
    });
    expect(all.body[1]).toEqual({ id: expect.any(String), type: 'SMS', sender: '+15557650002', contentPreview: 'second', createdAt: expect.any(String) });

    const page = await inbox(client, { type: 'SMS', limit: 1, offset: 1, includeAttachments: true });
    expect([page.total, page.body.map((m) => m.contentPreview)]).toEqual(['3', ['second']]);
    const ofA = await inbox(client, { deviceId: a.id });
    expect([ofA.total, ofA.body.map((m) => m.contentPreview)]).toEqual(['2', ['third', 'first']]);
    // smsgw receives SMS only: the other types SMS Gate names list nothing.
    expect(await inbox(client, { type: 'MMS' })).toEqual({ status: 200, total: '0', body: [] });
    // A window on arrival at smsgw, as client-go writes it (RFC 3339 in seconds).
    const later = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const none = await fetch(`${baseUrl}/3rdparty/v1/inbox?from=${later}`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    expect([none.status, none.headers.get('x-total-count'), await none.json()]).toEqual([200, '0', []]);
    const before = await inbox(client, { to: new Date(Date.now() + 60_000) });
    expect(before.total).toBe('3');
  });

  it('refuses invalid parameters with 400 {message}, and a token without inbox:list with 403', async () => {
    const u = await createTestUser(api.db);
    const get = async (query: string, token = u.apiKey) => {
      const res = await fetch(`${baseUrl}/3rdparty/v1/inbox?${query}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as { message: string } };
    };
    for (const query of [
      'type=SMS_OR_NOT',
      'limit=0',
      'limit=501',
      'limit=ten',
      'offset=-1',
      'from=yesterday',
      'to=2026-13-01T00:00:00Z',
      // Year 0, which Postgres does not have, and a zone suffix Date cannot read (the fuzz found a 500).
      'from=0000-01-01T00:00:00Z',
      'to=2026-07-01T00:00:00Z[Europe/Paris]',
      'deviceId=not-a-device',
    ]) {
      const res = await get(query);
      expect([query, res.status, Object.keys(res.body)]).toEqual([query, 400, ['message']]);
    }
    expect((await get('limit=500')).status).toBe(200);
    expect((await get('from=0001-01-01T00:00:00Z&to=2016-12-31T23:59:60Z')).status).toBe(200);
    const { access_token: lister } = await newerClient(baseUrl, '', u.apiKey).generateToken({ scopes: ['messages:list'] });
    expect(await get('', lister)).toEqual({ status: 403, body: { message: 'scope required: inbox:list' } });
  });
});

describe('GET /3rdparty/v1/logs', () => {
  it("answers 501 with upstream's message, to the published library too, and 403 without logs:read", async () => {
    const u = await createTestUser(api.db);
    const refusal = 'HTTP error 501: {"message":"For privacy reasons, device\'s logs are not accessible through Cloud server"}';
    await expect(publishedClient(baseUrl, u.user.name, u.apiKey).getLogs(new Date(Date.now() - 3_600_000), new Date())).rejects.toThrow(refusal);
    const { access_token: reader } = await newerClient(baseUrl, '', u.apiKey).generateToken({ scopes: ['logs:read'] });
    expect((await fetch(`${baseUrl}/3rdparty/v1/logs`, { headers: { authorization: `Bearer ${reader}` } })).status).toBe(501);
    const { access_token: other } = await newerClient(baseUrl, '', u.apiKey).generateToken({ scopes: ['settings:read'] });
    const res = await fetch(`${baseUrl}/3rdparty/v1/logs`, { headers: { authorization: `Bearer ${other}` } });
    expect([res.status, await res.json()]).toEqual([403, { message: 'scope required: logs:read' }]);
  });
});
