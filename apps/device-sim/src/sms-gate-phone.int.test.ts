/**
 * The simulated SMS Gate phone against a tiny local server that speaks the mobile API as the spec
 * describes it (real-devices.md §2): what the phone sends, in which order, and what it never
 * sends twice. The real server side is proven against this phone elsewhere.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import type { MessageSnapshot, SmsGateMessage, SmsReceivedWebhook } from '@smsgw/client';
import { startSmsGatePhone, type SmsGatePhone } from './sms-gate-phone.ts';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let seen: Seen[];
let offered: SmsGateMessage[];
let snapshots: MessageSnapshot[];
let tokens: Set<string>;
let streams: ServerResponse[];
let refuseInbound: number;
let inbound: SmsReceivedWebhook[];
let origin: string;
let dir: string;
const phones: SmsGatePhone[] = [];
const SIGNING_KEY = 'per-device-signing-key';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url!, 'http://x').pathname.replace('/mobile/v1', '');
    seen.push({ method: req.method!, path, headers: req.headers, body });
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    const bearer = req.headers.authorization?.replace(/^Bearer /, '');
    const route = `${req.method} ${path}`;
    if (route === 'POST /device') {
      if (req.headers.authorization !== 'Code 12345678' && req.headers.authorization !== 'Bearer smsgw_pt_pairing') return json(401, { message: 'no' });
      const token = `token-${tokens.size}`;
      tokens.add(token);
      return json(201, { id: `device-${tokens.size}`, token, login: 'sim' });
    }
    if (path === '/inbound') {
      const timestamp = req.headers['x-timestamp'] as string;
      const valid =
        req.headers['x-signature'] ===
        createHmac('sha256', SIGNING_KEY)
          .update(body + timestamp)
          .digest('hex');
      if (!valid || refuseInbound-- > 0) return json(valid ? 503 : 401, { message: 'refused' });
      inbound.push(JSON.parse(body) as SmsReceivedWebhook);
      return res.writeHead(204).end();
    }
    if (!bearer || !tokens.has(bearer)) return json(401, { message: 'unauthorized' });
    if (route === 'PATCH /device') return res.writeHead(204).end();
    if (route === 'GET /message') return json(200, offered);
    if (route === 'PATCH /message') {
      snapshots.push(...(JSON.parse(body) as MessageSnapshot[]));
      return res.writeHead(204).end();
    }
    if (route === 'GET /settings') return json(200, { gateway: { notification_channel: 'SSE_ONLY' }, webhooks: { signing_key: SIGNING_KEY } });
    if (route === 'GET /webhooks') return json(200, [{ id: 'hook-1', url: `${origin}/inbound`, event: 'sms:received' }]);
    if (route === 'GET /events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: SettingsUpdated\ndata: null\n\nevent: WebhooksUpdated\ndata: null\n\n');
      streams.push(res);
      return;
    }
    json(404, { message: 'not found' });
  });
});

beforeEach(async () => {
  seen = [];
  offered = [];
  snapshots = [];
  tokens = new Set();
  streams = [];
  refuseInbound = 0;
  inbound = [];
  dir = await mkdtemp(join(tmpdir(), 'sms-gate-phone-'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(phones.splice(0).map((phone) => phone.close()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function startPhone(pairing: string | undefined, env: Record<string, string> = {}): Promise<SmsGatePhone> {
  const config = loadConfig(DeviceSimConfigSchema, {
    SIM_PROTOCOL: 'sms-gate',
    SIM_MOBILE_URL: `${origin}/mobile/v1`,
    SIM_STATE_DIR: join(dir, 'state'),
    SIM_LOG_FILE: join(dir, 'sent.jsonl'),
    SIM_SEND_MS: '0',
    SIM_DELIVER_MS: '0',
    SIM_POLL_SECONDS: '3600',
    SIM_RETRY_MS: '20',
    SIM_RECONNECT_MS: '20',
    SIM_WEBHOOK_RETRY_MS: '10',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const phone = await startSmsGatePhone(config, { index: 0, ...(pairing !== undefined && { pairing }) }, pino({ level: 'silent' }));
  phones.push(phone);
  return phone;
}

function item(id: string, validUntil = new Date(Date.now() + 3600_000)): SmsGateMessage {
  return {
    id,
    textMessage: { text: `text of ${id}` },
    message: `text of ${id}`,
    phoneNumbers: ['+15550001111'],
    withDeliveryReport: true,
    isEncrypted: false,
    createdAt: new Date().toISOString(),
    state: 'Pending',
    validUntil: validUntil.toISOString(),
  };
}

const statesOf = (id: string) => snapshots.filter((s) => s.id === id).map((s) => s.state);
const calls = () => seen.map((s) => `${s.method} ${s.path}`);
const APP_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+03:00$/;

describe('simulated SMS Gate phone', () => {
  it('registers by code once, pulls on connect and on MessageEnqueued, and sends each id once', async () => {
    offered = [item('m1')];
    const phone = await startPhone('12345678');
    await vi.waitFor(() => expect(statesOf('m1')).toContain('Delivered'));
    expect(phone.deviceId).toBe('device-1');
    expect(calls().slice(0, 2)).toEqual(['POST /device', 'GET /events']);
    expect(calls()).toContain('GET /message');
    expect(seen[0]!.headers['user-agent']).toBe('me.capcom.smsgateway/1.68.0');
    expect(seen.find((s) => s.path === '/events')!.headers['user-agent']).toBe('okhttp/4.10.0');
    expect(seen.find((s) => s.path === '/message')!.headers).toMatchObject({ authorization: 'Bearer token-0' });

    // One report per state change, each a full snapshot with the phone's local dates.
    expect(statesOf('m1')).toEqual(['Processed', 'Sent', 'Delivered']);
    const last = snapshots.at(-1)!;
    expect(last.recipients).toEqual([{ phoneNumber: '+15550001111', state: 'Delivered' }]);
    expect(Object.keys(last.states)).toEqual(['Pending', 'Processed', 'Sent', 'Delivered']);
    for (const date of Object.values(last.states)) expect(date).toMatch(APP_DATE);

    // Offered again with new ones: the new ones are sent, the held one only reported again.
    offered = [item('m2'), item('m3'), item('m1')];
    for (const stream of streams) stream.write('data: null\n\n');
    // One report per change, each reading the message when it goes out: later ones may all say Delivered.
    for (const id of ['m2', 'm3']) {
      await vi.waitFor(() => expect(statesOf(id)).toHaveLength(3));
      expect(statesOf(id).at(-1)).toBe('Delivered');
    }
    await vi.waitFor(() => expect(statesOf('m1')).toEqual(['Processed', 'Sent', 'Delivered', 'Delivered']));
    expect(phone.sent).toEqual(['m1', 'm2', 'm3']);
    const logged = async () =>
      (await readFile(join(dir, 'sent.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id: string; to: string });
    await vi.waitFor(async () => expect(await logged()).toMatchObject([{ id: 'm1', to: '+15550001111' }, { id: 'm2' }, { id: 'm3' }]));
    // The settings and webhooks came from the events sent at connect.
    await vi.waitFor(() => expect(phone.webhooks).toHaveLength(1));
    expect(phone.settings?.webhooks?.signing_key).toBe(SIGNING_KEY);
  });

  it('fails a message past its validUntil with "TTL expired" instead of sending it', async () => {
    offered = [item('old', new Date(Date.now() - 1000))];
    const phone = await startPhone('smsgw_pt_pairing');
    await vi.waitFor(() => expect(statesOf('old')).toEqual(['Failed']));
    expect(snapshots[0]!.recipients).toEqual([{ phoneNumber: '+15550001111', state: 'Failed', error: 'TTL expired' }]);
    expect(phone.sent).toEqual([]);
  });

  it('a restarted phone sends PATCH /device with its stored token, then pulls, reads settings and webhooks, and opens the stream after the PATCH', async () => {
    const first = await startPhone('12345678');
    await vi.waitFor(() => expect(first.connects).toBe(1));
    await first.close();
    phones.length = 0;
    seen = [];

    const again = await startPhone(undefined);
    await vi.waitFor(() => expect(again.connects).toBe(1));
    expect(again.deviceId).toBe('device-1');
    // All four go out at once; the stream waits for the PATCH to succeed.
    expect(
      new Set(
        calls()
          .filter((c) => c !== 'GET /events')
          .slice(0, 4),
      ),
    ).toEqual(new Set(['PATCH /device', 'GET /message', 'GET /settings', 'GET /webhooks']));
    expect(calls().indexOf('GET /events')).toBeGreaterThan(calls().indexOf('PATCH /device'));
    const patch = seen.find((s) => s.method === 'PATCH' && s.path === '/device')!;
    expect(patch.headers.authorization).toBe('Bearer token-0');
    expect(JSON.parse(patch.body)).toMatchObject({ id: 'device-1', simCards: [{ slotIndex: 0, simNumber: 1 }] });
    expect(calls()).not.toContain('POST /device');
  });

  it('registers again with its pairing token when PATCH /device answers 401', async () => {
    const first = await startPhone('smsgw_pt_pairing');
    await vi.waitFor(() => expect(first.connects).toBe(1));
    await first.close();
    phones.length = 0;
    tokens.clear(); // The device was revoked.
    seen = [];

    const again = await startPhone('smsgw_pt_pairing');
    await vi.waitFor(() => expect(again.connects).toBe(1));
    expect(calls().filter((c) => c.endsWith(' /device'))).toEqual(['PATCH /device', 'POST /device']);
    expect(seen.find((s) => s.method === 'POST')!.headers.authorization).toBe('Bearer smsgw_pt_pairing');
    const stored = JSON.parse(await readFile(join(dir, 'state', '0.json'), 'utf8')) as { token: string };
    expect(stored.token).toBe('token-0');
  });

  it('reconnects a lost stream and pulls again', async () => {
    const phone = await startPhone('12345678');
    await vi.waitFor(() => expect(phone.connects).toBe(1));
    for (const stream of streams.splice(0)) stream.end();
    await vi.waitFor(() => expect(phone.connects).toBe(2));
    await vi.waitFor(() => expect(calls().filter((c) => c === 'GET /message')).toHaveLength(2));
  });

  it('posts an incoming SMS to its webhook, signed with the pushed key, retrying a refusal', async () => {
    const phone = await startPhone('12345678');
    await vi.waitFor(() => expect(phone.webhooks).toHaveLength(1));
    await vi.waitFor(() => expect(phone.settings).toBeDefined());
    refuseInbound = 2;
    await phone.receiveSms('+15557654321', 'hello phone');
    expect(inbound).toHaveLength(1);
    expect(seen.filter((s) => s.path === '/inbound')).toHaveLength(3);
    const [delivery] = inbound;
    expect(delivery).toMatchObject({
      webhookId: 'hook-1',
      event: 'sms:received',
      deviceId: 'device-1',
      payload: { message: 'hello phone', sender: '+15557654321', phoneNumber: '+15557654321', simNumber: 1 },
    });
    expect(delivery!.payload.messageId).toMatch(/^[0-9a-f]{1,8}$/);
    expect(delivery!.payload.receivedAt).toMatch(APP_DATE);
    expect(phone.received).toEqual(inbound);
  });
});
