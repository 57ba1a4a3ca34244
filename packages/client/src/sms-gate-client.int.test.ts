/**
 * The wire of SmsGateClient against a tiny local server that records what it gets: the app's
 * paths, headers and Gson bodies, its reading of the event stream, and its signed webhooks.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './http.ts';
import { SmsGateClient, type MessageSnapshot } from './sms-gate-client.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (seen: Seen, res: ServerResponse) => void;

const seen: Seen[] = [];
let handle: Handler;
let origin: string;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    seen.push(request);
    handle(request, res);
  });
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
  handle = (_request, res) => res.writeHead(204).end();
});

describe('REST calls', () => {
  it('registers by code with the app User-Agent, a body without null keys, and keeps the token', async () => {
    handle = (_request, res) => json(res, 201, { id: 'dev-1', token: 'device-token', login: 'sim' });
    const client = new SmsGateClient(`${origin}/mobile/v1`, { appVersion: '1.60.2' });
    const device = await client.register({ auth: { code: '12345678' }, name: 'Google/sdk_gphone64', pushToken: undefined });
    expect(device).toEqual({ id: 'dev-1', token: 'device-token', login: 'sim' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/mobile/v1/device', body: '{"name":"Google/sdk_gphone64"}' });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Code 12345678', 'user-agent': 'me.capcom.smsgateway/1.60.2', 'content-type': 'application/json' });

    await client.patchDevice({ id: 'dev-1', simCards: [{ slotIndex: 0, simNumber: 1, carrierName: null as unknown as string }] });
    expect(seen[1]).toMatchObject({ method: 'PATCH', url: '/mobile/v1/device', body: '{"id":"dev-1","simCards":[{"slotIndex":0,"simNumber":1}]}' });
    expect(seen[1]!.headers.authorization).toBe('Bearer device-token');
  });

  it('signs up with a pairing token as Bearer, or with no Authorization at all', async () => {
    handle = (_request, res) => json(res, 201, { id: 'dev-1', token: 't', login: 'sim' });
    const client = new SmsGateClient(`${origin}/mobile/v1`);
    await client.register({ auth: { pairingToken: 'smsgw_pt_abc' }, name: 'phone' });
    await client.register({ auth: 'none', name: 'phone' });
    expect(seen[0]!.headers.authorization).toBe('Bearer smsgw_pt_abc');
    expect(seen[1]!.headers.authorization).toBeUndefined();
    expect(seen[0]!.headers['user-agent']).toBe('me.capcom.smsgateway/1.68.0');
  });

  it('appends paths to the base as typed: a trailing slash gives a double slash', async () => {
    handle = (_request, res) => json(res, 200, []);
    const client = new SmsGateClient(`${origin}/api/mobile/v1/`, { token: 't' });
    await client.pull('lifo');
    await client.pull();
    await client.webhooks();
    expect(seen.map((s) => s.url)).toEqual(['/api/mobile/v1//message?order=lifo', '/api/mobile/v1//message', '/api/mobile/v1//webhooks']);
  });

  it('sends a state snapshot as an array with absent, not null, keys', async () => {
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 't' });
    const snapshot: MessageSnapshot = {
      id: 'm1',
      state: 'Sent',
      recipients: [{ phoneNumber: '+15550001111', state: 'Sent', error: undefined }],
      states: { Pending: '2026-07-01T14:03:05.123+03:00', Sent: '2026-07-01T14:03:06.001+03:00' },
    };
    await client.patchMessages([snapshot]);
    expect(seen[0]).toMatchObject({ method: 'PATCH', url: '/mobile/v1/message' });
    expect(seen[0]!.body).toBe(
      '[{"id":"m1","state":"Sent","recipients":[{"phoneNumber":"+15550001111","state":"Sent"}],"states":{"Pending":"2026-07-01T14:03:05.123+03:00","Sent":"2026-07-01T14:03:06.001+03:00"}}]',
    );
  });

  it('throws ApiError with the status on any non-2xx', async () => {
    handle = (_request, res) => json(res, 401, { error: 'unauthorized', message: 'Authentication required' });
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 'revoked' });
    const error = await client.patchDevice({ id: 'dev-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('refuses an answer it reads that is not declared JSON, as the app does', async () => {
    handle = (_request, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('{}');
    const error = await new SmsGateClient(`${origin}/mobile/v1`, { token: 't' }).settings().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 200, code: 'not_json' });
  });
});

describe('events', () => {
  it('reads frames with OkHttp’s User-Agent; a frame without event: is MessageEnqueued, one without data: is dropped', async () => {
    handle = (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(':keepalive\n\n');
      res.write('event: SettingsUpdated\ndata: null\n\n');
      res.write('event: NoData\n\n');
      res.write('data: null\n\n');
      // One frame in two chunks.
      res.write('event: MessageCancelled\nda');
      res.end('ta: {"messageId":"m1"}\n\n');
    };
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 'device-token' });
    const events: [string, unknown][] = [];
    const onOpen = vi.fn();
    await client.events((name, data) => events.push([name, data]), new AbortController().signal, { onOpen });
    expect(onOpen).toHaveBeenCalledOnce();
    expect(events).toEqual([
      ['SettingsUpdated', null],
      ['MessageEnqueued', null],
      ['MessageCancelled', { messageId: 'm1' }],
    ]);
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/mobile/v1/events' });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer device-token', 'user-agent': 'okhttp/4.10.0' });
  });

  it('rejects a stream that is not text/event-stream', async () => {
    handle = (_request, res) => json(res, 200, {});
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 't' });
    await expect(client.events(() => undefined, new AbortController().signal)).rejects.toMatchObject({ code: 'not_event_stream' });
  });

  it('resolves when its signal aborts', async () => {
    handle = (_request, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: WebhooksUpdated\ndata: null\n\n');
    const stop = new AbortController();
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 't' });
    await client.events((name) => name === 'WebhooksUpdated' && stop.abort(), stop.signal);
    expect(stop.signal.aborted).toBe(true);
  });
});

describe('postWebhook', () => {
  it('posts with no bearer token, the app User-Agent and a signature the receiver can verify', async () => {
    const client = new SmsGateClient(`${origin}/mobile/v1`, { token: 'device-token', appVersion: '1.68.0' });
    const body = {
      id: 'w1',
      webhookId: 'h1',
      event: 'sms:received',
      deviceId: 'dev-1',
      payload: { messageId: 'a1b2', message: 'hi', recipient: undefined, simNumber: null },
    };
    const before = Math.floor(Date.now() / 1000);
    await client.postWebhook(`${origin}/mobile/v1/inbound/dev-1/secret`, 'signing-key', body);
    const request = seen[0]!;
    expect(request).toMatchObject({ method: 'POST', url: '/mobile/v1/inbound/dev-1/secret' });
    expect(request.body).toBe('{"id":"w1","webhookId":"h1","event":"sms:received","deviceId":"dev-1","payload":{"messageId":"a1b2","message":"hi"}}');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers['user-agent']).toBe('me.capcom.smsgateway/1.68.0');
    const timestamp = request.headers['x-timestamp'] as string;
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(request.headers['x-signature']).toBe(
      createHmac('sha256', 'signing-key')
        .update(request.body + timestamp)
        .digest('hex'),
    );
  });

  it('throws ApiError on a refusal, so the caller retries', async () => {
    handle = (_request, res) => json(res, 401, { error: 'unauthorized', message: 'bad signature' });
    const client = new SmsGateClient(`${origin}/mobile/v1`);
    await expect(client.postWebhook(`${origin}/hook`, 'k', {})).rejects.toMatchObject({ status: 401 });
  });
});
