import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { allowedAddresses, guardedLookup, WebhookTargetError, type TargetPolicy } from '@smsgw/core';

/** At most this much of a response body is read (and kept for the delivery log's error line). */
const MAX_RESPONSE_BYTES = 4096;

export interface PostOptions {
  policy: TargetPolicy;
  connectTimeoutMs: number;
  timeoutMs: number;
  /** How much of the response body is read (default MAX_RESPONSE_BYTES): a Twilio TwiML answer may be longer. */
  maxResponseBytes?: number;
}

/** What one attempt gave: the status code when the endpoint answered, or why it did not. */
export interface PostResult {
  statusCode: number | null;
  error: string | null;
  /** The start of the response body, up to MAX_RESPONSE_BYTES. */
  body: string;
  /** The body went on past what was read. */
  truncated?: boolean;
}

// Connections are kept alive between attempts to the same endpoint; each new one is checked by the guarded lookup.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * POSTs one webhook (`sendWebhookRequest` with POST). */
export function postWebhook(url: URL, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostResult> {
  return sendWebhookRequest('POST', url, headers, body, options);
}

/**
 * Sends one webhook request (a POST, or a callback's GET without a body): no redirects followed (Node's client never follows them), a time limit on
 * connecting and one on the whole exchange, the response body read up to a small cap, and the
 * target's addresses checked against the policy on every new connection.
 */
export async function sendWebhookRequest(
  method: 'GET' | 'POST',
  url: URL,
  headers: Record<string, string>,
  body: string | null,
  options: PostOptions,
): Promise<PostResult> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal address is connected to without a lookup, so it is checked here.
  if (isIP(host)) {
    try {
      await allowedAddresses(host, options.policy);
    } catch (error) {
      return { statusCode: null, error: (error as Error).message, body: '' };
    }
  }
  return send(method, url, headers, body, options);
}

function send(method: 'GET' | 'POST', url: URL, headers: Record<string, string>, body: string | null, options: PostOptions): Promise<PostResult> {
  const isHttps = url.protocol === 'https:';
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(whole);
      resolve(result);
    };
    const fail = (message: string) => finish({ statusCode: null, error: message, body: '' });

    const request = (isHttps ? https : http).request(url, {
      method,
      agent: isHttps ? agents.https : agents.http,
      lookup: guardedLookup(options.policy),
      headers: body === null ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
    });
    const whole = setTimeout(() => {
      fail(`No complete response within ${options.timeoutMs} ms.`);
      request.destroy();
    }, options.timeoutMs);

    request.on('socket', (socket) => {
      if (!socket.connecting) return;
      const connect = setTimeout(() => {
        fail(`Could not connect within ${options.connectTimeoutMs} ms.`);
        request.destroy();
      }, options.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(connect));
      socket.once('close', () => clearTimeout(connect));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof WebhookTargetError) return fail(error.message);
      fail(error.code ? `${error.code}: ${error.message}` : error.message);
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const status = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8').slice(0, maxBytes);
        const redirect = status >= 300 && status < 400;
        finish({
          statusCode: status,
          error: status >= 200 && status < 300 ? null : redirect ? `Answered ${status}; redirects are not followed.` : `Answered ${status}.`,
          body: text,
          truncated: size > maxBytes,
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
        size += chunk.length;
        // Past the cap the rest is not read: the connection is dropped instead.
        if (size >= maxBytes) {
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      response.on('error', () => done());
    });
    request.end(body ?? undefined);
  });
}
