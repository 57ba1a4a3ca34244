import { createHmac } from 'node:crypto';
import { get } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { createPairing, type Db } from '@smsgw/db';
import { createTestUser } from './test-api.ts';

/**
 * The SMS Gate app as tests drive the mobile API: its User-Agent, Gson bodies (absent keys, never
 * null), dates in the phone's offset, its signed webhooks and its event stream (read with a real
 * SSE parser). Test code only.
 */

export const APP_VERSION = '1.68.0';
export const APP_HEADERS = { 'user-agent': `me.capcom.smsgateway/${APP_VERSION}`, 'content-type': 'application/json' };

export type PhoneMethod = 'GET' | 'POST' | 'PATCH';

/** A request as the app sends it; `authorization` is the whole header, `body` any JSON (or raw text). */
export function phoneRequest(
  app: FastifyInstance,
  method: PhoneMethod,
  url: string,
  options: { authorization?: string; body?: unknown; raw?: string; headers?: Record<string, string>; remoteAddress?: string } = {},
) {
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  return app.inject({
    method,
    url,
    headers: {
      ...(method === 'GET' ? { 'user-agent': APP_HEADERS['user-agent'] } : APP_HEADERS),
      ...(options.authorization && { authorization: options.authorization }),
      ...options.headers,
    },
    ...(payload !== undefined && { payload }),
    ...(options.remoteAddress && { remoteAddress: options.remoteAddress }),
  });
}

/** `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in a phone's offset (minutes east of UTC), as the app writes dates. */
export function phoneDate(date: Date, offsetMinutes = 180): string {
  const local = new Date(date.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The headers of the app's webhook POST: `X-Timestamp` and the hex HMAC-SHA256 of body + timestamp. */
export function signedHeaders(signingKey: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = createHmac('sha256', signingKey)
    .update(body + String(timestamp))
    .digest('hex');
  return { 'x-timestamp': String(timestamp), 'x-signature': signature };
}

export interface PhoneStream {
  status: number;
  contentType: string | null;
  events: EventSourceMessage[];
  /** When each of `events` arrived (ms). */
  arrivals: number[];
  comments: string[];
  /** Ends the stream (the app going away) and waits until it is read to the end. */
  close(): Promise<void>;
}

/**
 * Opens `GET <url>` as the app's SSE client does (OkHttp's User-Agent), on a connection of its
 * own that closing the stream ends, and parses what arrives.
 */
export function openPhoneStream(url: string, token: string): Promise<PhoneStream> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { authorization: `Bearer ${token}`, 'user-agent': 'okhttp/4.10.0', accept: 'text/event-stream' } });
    request.on('error', reject);
    request.on('response', (res) => {
      const ended = new Promise<void>((done) => res.on('close', done));
      const stream: PhoneStream = {
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'] ?? null,
        events: [],
        arrivals: [],
        comments: [],
        close: async () => {
          request.destroy();
          await ended;
        },
      };
      const parser = createParser({
        onEvent: (event) => {
          stream.events.push(event);
          stream.arrivals.push(Date.now());
        },
        onComment: (comment) => stream.comments.push(comment),
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      res.on('error', () => undefined);
      resolve(stream);
    });
  });
}

let address = 0;
/** A distinct client address: registrations are limited per address. */
export function nextAddress(): string {
  address++;
  return `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
}

export interface EnrolledPhone {
  id: string;
  token: string;
}

/** A phone enrolled as the app does it ("Sign in by code" with a fresh pairing of the user). */
export async function enrolPhone(app: FastifyInstance, db: Db, userId: string, body: object = { name: 'Google/sdk_gphone64' }): Promise<EnrolledPhone> {
  const { code } = await createPairing(db, { userId, ttlSeconds: 600 });
  const res = await phoneRequest(app, 'POST', '/mobile/v1/device', { authorization: `Code ${code}`, body, remoteAddress: nextAddress() });
  if (res.statusCode !== 201) throw new Error(`registration answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

export interface PhoneOwner {
  apiKey: string;
  phone: EnrolledPhone;
}

/** A new user with an enrolled phone that made its start-up call (`PATCH /device`), so it is available. */
export async function phoneOwner(app: FastifyInstance, db: Db): Promise<PhoneOwner> {
  const { userId, apiKey } = await createTestUser(db, { devices: 0 });
  return { apiKey, phone: await enrolConnectedPhone(app, db, userId) };
}

/** A phone enrolled as above that has made its start-up call (`PATCH /device`), so it counts as seen. */
export async function enrolConnectedPhone(app: FastifyInstance, db: Db, userId: string): Promise<EnrolledPhone> {
  const phone = await enrolPhone(app, db, userId);
  const res = await phoneRequest(app, 'PATCH', '/mobile/v1//device', { authorization: `Bearer ${phone.token}`, body: { id: phone.id } });
  if (res.statusCode !== 204) throw new Error(`PATCH /device answered ${res.statusCode}: ${res.body}`);
  return phone;
}
