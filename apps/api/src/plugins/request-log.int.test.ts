import type { LogLevel } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from './request-log.ts';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { deviceLogLevel } from '../app.ts';

/**
 * Issue 11, item 19: credentials put in the query string are refused (they are read from headers
 * only), and the request log shows the URL without them.
 */
const lines: string[] = [];
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ LOG_LEVEL: 'info' }, { logger: { stream: { write: (line: string) => void lines.push(line) } } });
});
afterAll(async () => {
  await api?.close();
});

describe('credentials in the query string', () => {
  it.each([
    ['api_key', 'smsgw_sk_querysecret1'],
    ['token', 'smsgw_dt_querysecret2'],
    ['access_token', 'eyJquerysecret3'],
    ['apiKey', 'smsgw_sk_querysecret4'],
  ])('refuses ?%s= with 401 and logs the URL with the value redacted', async (name, secret) => {
    const res = await api.app.inject({ method: 'GET', url: `/api/v1/sms?limit=5&${name}=${secret}&offset=0` });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: { error: 'unauthorized', message: 'Authentication required' } });
    const logged = lines.filter((line) => line.includes('"url":"/api/v1/sms?'));
    expect(logged.map((line) => JSON.parse(line).req.url)).toContain(`/api/v1/sms?limit=5&${name}=[REDACTED]&offset=0`);
    expect(lines.join('\n')).not.toContain(secret);
  });
});

describe('redactUrl', () => {
  it.each([
    ['/api/v1/sms', '/api/v1/sms'],
    ['/api/v1/sms?status=sent&to=%2B15550100001', '/api/v1/sms?status=sent&to=%2B15550100001'],
    ['/x?API_KEY=a&password=b&client_secret=c&x-api-key=d', '/x?API_KEY=[REDACTED]&password=[REDACTED]&client_secret=[REDACTED]&x-api-key=[REDACTED]'],
    ['/x?%61pi_key=a', '/x?%61pi_key=[REDACTED]'],
    ['/x?token', '/x?token'],
    ['/x?token=a=b&limit=1', '/x?token=[REDACTED]&limit=1'],
    ['/x?%E0%A4%A=1', '/x?%E0%A4%A=1'],
    ['/mobile/v1/inbound/0195f2a0-d1/s3cr3t', '/mobile/v1/inbound/0195f2a0-d1/[REDACTED]'],
    ['/api/mobile/v1/inbound/d1/s3cr3t?x=1', '/api/mobile/v1/inbound/d1/[REDACTED]?x=1'],
  ])('%s -> %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('device traffic in the log', () => {
  it("leaves the device protocols' request lines out at info, and keeps the users'", async () => {
    const { devices, apiKey } = await createTestUser(api.db);
    const heartbeat = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${devices[0]!.token}` } });
    expect(heartbeat.statusCode).toBeLessThan(300);
    const pull = await api.app.inject({ method: 'GET', url: '/mobile/v1/message', headers: { authorization: 'Bearer nope' } });
    expect(pull.statusCode).toBe(401);
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/templates?limit=7', headers: { 'x-api-key': apiKey } })).statusCode).toBe(200);

    const urls = lines.map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter(Boolean);
    expect(urls).toContain('/api/v1/templates?limit=7');
    expect(urls.filter((url) => url!.startsWith('/api/v1/device/') || url!.startsWith('/mobile/'))).toEqual([]);
  });

  it.each<[LogLevel, LogLevel]>([
    ['info', 'warn'],
    ['debug', 'debug'],
    ['trace', 'trace'],
    ['warn', 'warn'],
    ['error', 'error'],
    ['silent', 'silent'],
  ])('LOG_LEVEL=%s logs device requests at %s', (level, expected) => {
    expect(deviceLogLevel(level)).toBe(expected);
  });
});
