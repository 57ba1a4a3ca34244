import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

/**
 * Issue 11, items 14 and 15 over real sockets, where inject cannot go: Node's own refusals (a
 * request line or headers over its limit) and a request that trickles in answer `{error, message}`,
 * and the request timeout never cuts a long poll or an event stream.
 */
const TIMEOUT_SECONDS = 1;
let api: TestApi;
let port: number;

beforeAll(async () => {
  api = await startTestApi({ REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS), DEVICE_HEARTBEAT_SECONDS: '1' });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  port = (api.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await api?.close();
});

interface RawResponse {
  status: number;
  headers: string;
  body: string;
  /** Milliseconds from connecting until the server closed the connection. */
  closedAfterMs: number;
}

/**
 * Writes `head`, then each of `trickle` one every `everyMs`, and reads until the server closes (or
 * until GIVE_UP_MS, so that a server that never closes fails the test rather than hanging it).
 */
const GIVE_UP_MS = 8000;
function rawRequest(head: string, trickle: string[] = [], everyMs = 200): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => socket.destroy(), GIVE_UP_MS);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const [headers = '', body = ''] = received.split('\r\n\r\n', 2);
      resolve({ status: Number(headers.split(' ')[1]), headers, body, closedAfterMs: Date.now() - started });
    });
    socket.write(head);
    const rest = [...trickle];
    timer = setInterval(() => {
      const next = rest.shift();
      if (next === undefined || socket.destroyed) clearInterval(timer);
      else socket.write(next);
    }, everyMs);
  });
}

describe("Node's refusals as {error, message} (item 14)", () => {
  it('answers a request line over 16 KiB with 414 uri_too_long JSON', async () => {
    const res = await rawRequest(`GET /api/v1/sms?to=${'1'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 414,
      body: { error: 'uri_too_long', message: 'The request URI is too long.' },
    });
  });

  it('answers headers over 16 KiB with 431 headers_too_large JSON', async () => {
    const res = await rawRequest(`GET /api/v1/sms HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 431,
      body: { error: 'headers_too_large', message: 'The request headers are too large.' },
    });
  });

  it('answers a request Node cannot parse with 400 invalid_request JSON', async () => {
    const res = await rawRequest('GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: 'The request is not valid HTTP.' },
    });
  });
});

describe('the request timeout (item 15)', () => {
  it('answers a body that trickles in with 408 request_timeout and closes, within the timeout', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const body = JSON.stringify({ recipients: ['+15550100020'], body: 'slow' });
    const head = `POST /api/sms/send HTTP/1.1\r\nHost: x\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;

    // One byte every 200 ms: the whole body would take about ten seconds.
    const res = await rawRequest(head, [...body], 200);

    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 408,
      body: { error: 'request_timeout', message: 'The request did not arrive in time.' },
    });
    expect(res.closedAfterMs).toBeLessThan(TIMEOUT_SECONDS * 1000 + 1500);
    expect(await api.db.message.count({ where: { userId } })).toBe(0);
  });

  it('answers headers that never end with 408 within the timeout', async () => {
    const res = await rawRequest(
      'GET /health HTTP/1.1\r\nHost: x\r\n',
      ['X-A: 1\r\n', 'X-B: 2\r\n', 'X-C: 3\r\n', 'X-D: 4\r\n', 'X-E: 5\r\n', 'X-F: 6\r\n', 'X-G: 7\r\n', 'X-H: 8\r\n'],
      300,
    );
    expect(res.status).toBe(408);
    expect(res.closedAfterMs).toBeLessThan(TIMEOUT_SECONDS * 1000 + 1500);
  });

  it('does not cut a claim that long-polls for longer than the timeout', async () => {
    const { devices } = await createTestUser(api.db);
    const started = Date.now();
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const wait = TIMEOUT_SECONDS * 3;
      const req = httpRequest(
        { host: '127.0.0.1', port, path: `/api/v1/device/messages?wait=${wait}`, headers: { authorization: `Bearer ${devices[0]!.token}` } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({ status: 200, body: { messages: [] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 3000 - 100);
  });

  it('does not cut an event stream held for longer than the timeout', async () => {
    const { devices } = await createTestUser(api.db);
    const heartbeats: number[] = [];
    let closed = false;
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/api/v1/device/events',
      agent: false,
      headers: { authorization: `Bearer ${devices[0]!.token}` },
    });
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (chunk.includes(': heartbeat')) heartbeats.push(Date.now());
    });
    response.on('close', () => (closed = true));
    const opened = Date.now();

    await expect.poll(() => heartbeats.filter((at) => at - opened > TIMEOUT_SECONDS * 2000).length, { timeout: 10_000 }).toBeGreaterThan(0);

    expect({ status: response.statusCode, closed }).toEqual({ status: 200, closed: false });
    req.destroy();
  });
});
