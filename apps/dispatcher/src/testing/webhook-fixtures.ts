import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { assignMessages, claimMessages } from '@smsgw/db';
import { send, uniquePhone, type TestApi, type TestUser } from '@smsgw/api/testing';

/**
 * Fixtures of the webhook delivery tests: a loopback receiver that records what it gets, endpoint
 * rows written directly (as if the API had registered them), and messages brought to `sending`
 * without a phone so that a test makes their events with one device report.
 */

export interface Received {
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
    const entry: Received = { headers: req.headers, body: '', at: Date.now(), closedAt: null };
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
  const ids = res.json().message_ids as string[];
  const deviceId = user.devices[0]!.id;
  const now = new Date();
  expect(await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId })), now })).toHaveLength(count);
  expect(await claimMessages(api.sql, { deviceId, limit: 500, now })).toHaveLength(count);
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
