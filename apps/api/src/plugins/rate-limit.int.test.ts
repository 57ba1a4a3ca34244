import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createDevice } from '@smsgw/db';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_PER_MINUTE: '3', DEVICE_RATE_LIMIT_PER_MINUTE: '6' });
});
afterAll(async () => {
  await api?.close();
});

let addresses = 0;
/** A client address of its own for each test: anonymous budgets are per address. */
const nextAddress = () => `10.77.${(++addresses >> 8) & 255}.${addresses & 255}`;

function heartbeat(token: string) {
  return api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${token}` } });
}

describe('rate limits', () => {
  it('gives a user credential RATE_LIMIT_PER_MINUTE and a device token its own DEVICE_RATE_LIMIT_PER_MINUTE', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const userStatuses: number[] = [];
    for (let i = 0; i < 4; i++) userStatuses.push((await call(api.app, apiKey, 'GET', '/api/v1/devices')).statusCode);
    const deviceStatuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await heartbeat(devices[0]!.token);
      deviceStatuses.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json()).toMatchObject({ error: 'rate_limited' });
    }
    expect(userStatuses).toEqual([200, 200, 200, 429]);
    expect(deviceStatuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  it('counts every API key and JWT of one user against one budget, and another user keeps theirs', async () => {
    const { user, apiKey } = await createTestUser(api.db, { devices: 0 });
    const { key: secondKey } = await createApiKey(api.db, { userId: user.id, name: 'second' });
    const token = await api.app.inject({ method: 'POST', url: '/api/v1/auth/token', headers: { 'x-api-key': apiKey } });
    expect(token.statusCode).toBe(200);
    const jwt = token.json().token as string;

    const second = await call(api.app, secondKey, 'GET', '/api/v1/devices');
    const withJwt = await api.app.inject({ method: 'GET', url: '/api/v1/devices', headers: { authorization: `Bearer ${jwt}` } });
    const third = await createApiKey(api.db, { userId: user.id, name: 'third' });
    const over = await call(api.app, third.key, 'GET', '/api/v1/devices');

    expect([second.statusCode, withJwt.statusCode, over.statusCode]).toEqual([200, 200, 429]);
    expect(over.json()).toEqual({ error: 'rate_limited', message: expect.stringMatching(/^Too many requests: at most 3 per minute/) });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    const other = await createTestUser(api.db, { devices: 0 });
    expect((await call(api.app, other.apiKey, 'GET', '/api/v1/devices')).statusCode).toBe(200);
  });

  it("gives each device a budget of its own, apart from its user's and its sibling's", async () => {
    const { user, apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const sibling = await createDevice(api.db, { userId: user.id, name: 'sibling' });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await heartbeat(devices[0]!.token)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    expect((await heartbeat(sibling.token)).statusCode).toBe(200);
    expect((await call(api.app, apiKey, 'GET', '/api/v1/devices')).statusCode).toBe(200);
  });

  it('limits an anonymous route per client address', async () => {
    // The SMS Gate webhook of incoming SMS has no credential header: its budget is the address's.
    const [first, second] = [nextAddress(), nextAddress()];
    const post = (remoteAddress: string) => api.app.inject({ method: 'POST', url: `/mobile/v1/inbound/${randomUUID()}/nope`, remoteAddress, payload: {} });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(first)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await post(second)).statusCode).toBe(401);
  });

  it('never limits /health, /ready and /metrics', async () => {
    const remoteAddress = nextAddress();
    for (const url of ['/health', '/ready', '/metrics']) {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await api.app.inject({ method: 'GET', url, remoteAddress })).statusCode);
      expect({ url, statuses }).toEqual({ url, statuses: [200, 200, 200, 200, 200] });
    }
  });
});
