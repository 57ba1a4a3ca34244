import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createParser } from 'eventsource-parser';
import { ApiError } from './http.ts';

/**
 * A client of the SMS Gate mobile API (real-devices.md §2 and §2b) that speaks it exactly as the
 * unmodified Android app does: paths appended to the base as typed (`${base}/device`, so a base
 * with a trailing slash gives a double slash), `User-Agent: me.capcom.smsgateway/<version>` on REST
 * calls and webhook posts, OkHttp's own on the event stream, Gson bodies (a null or undefined
 * value is an absent key), and every non-2xx answer, or a read answer that is not JSON, an error.
 */
export type ProcessingState = 'Pending' | 'Processed' | 'Sent' | 'Delivered' | 'Failed' | 'Cancelling' | 'Cancelled';

/** Redacted by the app to the last four characters ("****4567"). */
export interface SimCard {
  slotIndex: number;
  simNumber: number;
  phoneNumber?: string;
  carrierName?: string;
  iccid?: string;
}

export interface SmsGateRegistration {
  /** "Sign in by code" (`Authorization: Code <digits>`) or "Sign up" with a private token (`Bearer`); `none`: "Sign up" with the token field empty. */
  auth: { code: string } | { pairingToken: string } | 'none';
  /** `${Build.MANUFACTURER}/${Build.PRODUCT}` on a real phone. */
  name: string;
  pushToken?: string;
  simCards?: SimCard[];
}

export interface SmsGateDevice {
  id: string;
  token: string;
  login: string;
  password?: string;
}

/** An item of `GET /message`. */
export interface SmsGateMessage {
  id: string;
  textMessage?: { text: string };
  dataMessage?: { data: string; port: number };
  message?: string;
  phoneNumbers: string[];
  simNumber?: number;
  withDeliveryReport?: boolean;
  isEncrypted?: boolean;
  priority?: number;
  validUntil?: string;
  scheduleAt?: string;
  state?: ProcessingState;
  createdAt?: string;
}

/** An element of `PATCH /message`: the phone's whole current view of one message. */
export interface MessageSnapshot {
  id: string;
  state: ProcessingState;
  recipients: { phoneNumber: string; state: ProcessingState; error?: string }[];
  /** The first time each state was reached, as `appDate` writes it. */
  states: Partial<Record<ProcessingState, string>>;
}

/** `GET /settings`: every value an object; the app ignores keys it does not know. */
export interface SmsGateSettings {
  gateway?: { notification_channel?: string };
  webhooks?: { signing_key?: string; retry_count?: number };
  [module: string]: Record<string, unknown> | undefined;
}

export interface SmsGateWebhook {
  id: string;
  url: string;
  event: string;
}

/** The body of an `sms:received` webhook post. */
export interface SmsReceivedWebhook {
  id: string;
  webhookId: string;
  event: 'sms:received';
  deviceId: string;
  payload: {
    messageId: string;
    message: string;
    sender?: string;
    recipient?: string;
    simNumber?: number;
    receivedAt: string;
    phoneNumber: string;
  };
}

export const DEFAULT_APP_VERSION = '1.68.0';
/** OkHttp's default, which the app's event stream sends (2b.7). */
export const OKHTTP_USER_AGENT = 'okhttp/4.10.0';

/** Gson's output: keys whose value is null or undefined are left out (array elements are kept). */
export function gsonJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    return v === null && !Array.isArray(this) ? undefined : v;
  });
}

/** `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in a local offset ("+03:00"), as the app writes dates; XXX writes a zero offset as `Z`. */
export function appDate(date: Date, offset: string): string {
  const match = /^([+-])(\d{2}):(\d{2})$/.exec(offset);
  if (!match) throw new Error(`offset must look like +03:00, got ${offset}`);
  const minutes = (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
  const local = new Date(date.getTime() + minutes * 60_000).toISOString().slice(0, 23);
  return `${local}${minutes === 0 ? 'Z' : offset}`;
}

/** `hex(HMAC-SHA256(key = signingKey, message = rawBody + timestamp))`, as the app signs a webhook post. */
export function webhookSignature(signingKey: string, rawBody: string, timestamp: string): string {
  return createHmac('sha256', signingKey)
    .update(rawBody + timestamp)
    .digest('hex');
}

export class SmsGateClient {
  /** The device token, from `register` or from storage. */
  token: string | undefined;
  private readonly userAgent: string;

  constructor(
    /** As typed into the app, e.g. `https://sms.example.com/mobile/v1`. */
    readonly baseUrl: string,
    options: { token?: string; appVersion?: string } = {},
  ) {
    this.token = options.token;
    this.userAgent = `me.capcom.smsgateway/${options.appVersion ?? DEFAULT_APP_VERSION}`;
  }

  /** `POST /device`; the client keeps the token it returns. */
  async register(registration: SmsGateRegistration): Promise<SmsGateDevice> {
    const { auth, ...body } = registration;
    const authorization = auth === 'none' ? undefined : 'code' in auth ? `Code ${auth.code}` : `Bearer ${auth.pairingToken}`;
    const device = await this.call<SmsGateDevice>('POST', '/device', { body, authorization });
    this.token = device.token;
    return device;
  }

  /** `PATCH /device`: a 401 here, and only here, makes the app register again. */
  async patchDevice(patch: { id: string; pushToken?: string; simCards?: SimCard[] }): Promise<void> {
    await this.call('PATCH', '/device', { body: patch, read: false });
  }

  /** `GET /message`; without `order` as apps before v1.46 ask. */
  pull(order?: 'lifo' | 'fifo', signal?: AbortSignal): Promise<SmsGateMessage[]> {
    return this.call('GET', order ? `/message?order=${order}` : '/message', { signal });
  }

  /** `PATCH /message` (the app sends one element per call). */
  async patchMessages(snapshots: MessageSnapshot[]): Promise<void> {
    await this.call('PATCH', '/message', { body: snapshots, read: false });
  }

  settings(): Promise<SmsGateSettings> {
    return this.call('GET', '/settings');
  }

  webhooks(): Promise<SmsGateWebhook[]> {
    return this.call('GET', '/webhooks');
  }

  /**
   * `GET /events`: calls `onOpen` when the stream is open and `onEvent` with each event's name
   * and JSON data (a frame with no `event:` is `MessageEnqueued`, as the app reads it; a frame
   * with no `data:` is dropped, as OkHttp drops it). Resolves when the stream ends or `signal`
   * aborts; rejects when it cannot open.
   */
  async events(onEvent: (name: string, data: unknown) => void, signal: AbortSignal, options: { onOpen?: () => void } = {}): Promise<void> {
    const res = await fetch(`${this.baseUrl}/events`, {
      headers: { ...this.bearer(), accept: 'text/event-stream', 'user-agent': OKHTTP_USER_AGENT },
      signal,
    });
    if (!res.ok || !res.body) throw await apiError(res);
    // OkHttp-SSE refuses a stream of any other type.
    if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
      await res.body.cancel();
      throw new ApiError(res.status, 'not_event_stream', `GET /events answered ${res.headers.get('content-type') ?? 'no content type'}`);
    }
    options.onOpen?.();
    const parser = createParser({ onEvent: ({ event, data }) => onEvent(event ?? 'MessageEnqueued', parseData(data)) });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  /** Posts a webhook as the app does: no bearer token, signed with the key from `GET /settings`, timed out after 30 s. */
  async postWebhook(url: string, signingKey: string, body: unknown, options: { now?: Date } = {}): Promise<void> {
    const raw = gsonJson(body);
    const timestamp = String(Math.floor((options.now ?? new Date()).getTime() / 1000));
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'x-timestamp': timestamp,
        'x-signature': webhookSignature(signingKey, raw, timestamp),
      },
      body: raw,
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw await apiError(res);
    await res.body?.cancel();
  }

  private bearer(): Record<string, string> {
    return this.token === undefined ? {} : { authorization: `Bearer ${this.token}` };
  }

  private async call<T>(
    method: string,
    path: string,
    options: { body?: unknown; authorization?: string; read?: boolean; signal?: AbortSignal } = {},
  ): Promise<T> {
    const auth = 'authorization' in options ? (options.authorization === undefined ? {} : { authorization: options.authorization }) : this.bearer();
    const res = await restCall(`${this.baseUrl}${path}`, {
      method,
      headers: { ...auth, 'user-agent': this.userAgent, ...(options.body !== undefined && { 'content-type': 'application/json' }) },
      ...(options.body !== undefined && { body: gsonJson(options.body) }),
      ...(options.signal && { signal: options.signal }),
    });
    if (res.status < 200 || res.status > 299) throw errorOf(res.status, res.text);
    if (options.read === false) return undefined as T;
    // The app reads a body only when it is declared JSON.
    if (!res.contentType?.startsWith('application/json')) {
      throw new ApiError(res.status, 'not_json', `${method} ${path} answered ${res.contentType ?? 'no content type'}`);
    }
    return JSON.parse(res.text) as T;
  }
}

// The app's REST client (OkHttp) keeps its connections alive; so do the simulated phones, on one pool per process.
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };
// OkHttp's default timeout, which the app's REST client keeps.
const REST_TIMEOUT_MS = 10_000;

/**
 * One REST call of the app over node's own HTTP client (its keep-alive pool): the phones of a
 * simulator make thousands a second, and fetch costs several times as much CPU for each.
 */
function restCall(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<{ status: number; contentType: string | undefined; text: string }> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: options.method,
        agent,
        headers: { ...options.headers, ...(options.body !== undefined && { 'content-length': String(Buffer.byteLength(options.body)) }) },
        timeout: REST_TIMEOUT_MS,
        ...(options.signal && { signal: options.signal }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method} ${url}: no answer within ${REST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

async function apiError(res: Response): Promise<ApiError> {
  return errorOf(res.status, await res.text().catch(() => ''));
}

function errorOf(status: number, text: string): ApiError {
  let body: { error?: unknown; message?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not JSON: the status says enough.
  }
  return new ApiError(status, typeof body.error === 'string' ? body.error : undefined, typeof body.message === 'string' ? body.message : `HTTP ${status}`);
}
