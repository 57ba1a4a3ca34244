import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { generateWebhookSecret, newId, type Resolver } from '@smsgw/core';
import { applyReports, assignMessages, offerMessages } from '@smsgw/db';
import { send, startTestApi, uniquePhone, type TestApi, type TestUser } from '@smsgw/api/testing';
import { startTestDispatcher } from './test-dispatcher.ts';

/**
 * Fixtures of the webhook delivery tests: a loopback receiver that records what it gets, endpoint
 * rows written directly (as if the API had registered them), and messages brought to `sending`
 * without a phone so that a test makes their events with one device report.
 */

/** Loopback targets allowed, quick retries and short time limits: for the test dispatchers. */
export const FAST_WEBHOOKS = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_DELAYS: '0.05,0.05,0.05,0.05',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_CONNECT_TIMEOUT_MS: '500',
};

/**
 * The setup of a webhook test file: an API that allows loopback targets (listening on a port when
 * `listen`), and the receivers, dispatchers and anything `track`ed closed after each test,
 * receivers first, so that a hanging request ends at once instead of holding up a worker's close.
 * Call it at the top of the file; `api` and `baseUrl` are there from `beforeAll` on.
 */
export function webhookTestbed(options: { listen?: boolean } = {}) {
  let api: TestApi | undefined;
  let baseUrl = '';
  const receivers: Receiver[] = [];
  const started: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    if (options.listen) {
      await api.app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    }
  });
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close();
    for (const thing of started.splice(0).reverse()) await thing.close();
  });
  afterAll(async () => {
    await api?.close();
  });
  return {
    get api(): TestApi {
      return api!;
    },
    get baseUrl(): string {
      return baseUrl;
    },
    track(thing: { close(): Promise<void> }): void {
      started.push(thing);
    },
    async receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
      const r = await startReceiver(answer);
      receivers.push(r);
      return r;
    },
    async dispatcher(env: Record<string, string> = {}, resolver?: Resolver): Promise<void> {
      started.push(await startTestDispatcher(api!, { ...FAST_WEBHOOKS, ...env }, resolver ? { webhookResolver: resolver } : {}));
    },
  };
}

export interface Received {
  /** The request line: a callback's GET carries its report in the URL. */
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived, and when its connection closed (null while it is open). */
  at: number;
  closedAt: number | null;
}

/** What the receiver does with its n-th request (from 1): answer a status (with headers), or never answer. */
export type Answer = number | { status: number; headers: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The most requests that were open at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

/** The parsed bodies of what a receiver got. */
export function payloads(receiver: Receiver): { type: string; timestamp: string; data: Record<string, unknown> & { id: string } }[] {
  return receiver.received.map((r) => JSON.parse(r.body));
}

/** An HTTP server on 127.0.0.1 that answers each request with `answer(n, request)`. */
export async function startReceiver(answer: (n: number, request: Received) => Answer = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const entry: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '', at: Date.now(), closedAt: null };
    res.once('close', () => {
      inFlight--;
      entry.closedAt = Date.now();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      entry.body = Buffer.concat(chunks).toString('utf8');
      received.push(entry);
      const reply = answer(received.length, entry);
      if (reply === 'hang') return;
      const { status, headers } = typeof reply === 'number' ? { status: reply, headers: {} } : reply;
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface WebhookOptions {
  events?: string[];
  enabled?: boolean;
  previousSecret?: string;
  previousSecretExpiresAt?: Date;
}

/** An endpoint row written directly, as the API would after its checks (or as if the rules changed since). */
export async function createWebhook(api: TestApi, userId: string, url: string, options: WebhookOptions = {}) {
  const secret = generateWebhookSecret();
  const row = await api.db.webhook.create({
    data: {
      id: newId(),
      userId,
      url,
      events: options.events ?? ['message.sent', 'message.delivered', 'message.failed'],
      secret,
      enabled: options.enabled ?? true,
      previousSecret: options.previousSecret ?? null,
      previousSecretExpiresAt: options.previousSecretExpiresAt ?? null,
    },
  });
  return { id: row.id, secret };
}

/**
 * Sends `count` messages and brings them to `sending` on the user's first device, as if the
 * dispatcher had assigned them and the phone claimed them. Call it before a dispatcher runs.
 */
export async function sendingMessages(api: TestApi, user: TestUser, count = 1): Promise<string[]> {
  const recipients = Array.from({ length: count }, () => uniquePhone());
  const res = await send(api.app, user.apiKey, { recipients, body: 'webhook test' });
  expect(res.statusCode).toBe(200);
  return toSending(api, user, res.json().message_ids as string[]);
}

/** Brings stored messages to `sending` on the user's first device, without a phone. */
export async function toSending(api: TestApi, user: TestUser, ids: string[]): Promise<string[]> {
  const count = ids.length;
  const deviceId = user.devices[0]!.id;
  const now = new Date();
  expect(await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId })), now })).toHaveLength(count);
  const offered = await offerMessages(api.sql, { deviceId, limit: 500, order: 'oldest', now });
  expect(offered).toHaveLength(count);
  const acknowledged = await applyReports(api.sql, { status: 'sending', now, reports: ids.map((id) => ({ id, deviceId, at: now, error: null })) });
  expect(acknowledged.moved).toHaveLength(count);
  return ids;
}

/** A device's reports through `POST /api/v1/device/reports`; a dispatcher applies them. */
export async function report(api: TestApi, user: TestUser, status: 'sent' | 'delivered' | 'failed', ids: string[]): Promise<void> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/api/v1/device/reports',
    headers: { authorization: `Bearer ${user.devices[0]!.token}` },
    payload: { reports: ids.map((id) => ({ id, status, ...(status === 'failed' && { error: 'test failure' }) })) },
  });
  expect(res.json()).toMatchObject({ accepted: ids.length, rejected: [] });
}

/** The delivery rows of a message (or of an endpoint), oldest first. */
export function deliveries(api: TestApi, where: { messageId?: string; webhookId?: string }) {
  return api.db.webhookDelivery.findMany({ where, orderBy: [{ createdAt: 'asc' }, { type: 'asc' }] });
}
