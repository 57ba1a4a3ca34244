import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_PER_MINUTE: '3', DEVICE_RATE_LIMIT_PER_MINUTE: '6' });
});
afterAll(async () => {
  await api?.close();
});

describe('rate limits', () => {
  it('gives a user credential RATE_LIMIT_PER_MINUTE and a device token its own DEVICE_RATE_LIMIT_PER_MINUTE', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const userStatuses: number[] = [];
    for (let i = 0; i < 4; i++) userStatuses.push((await call(api.app, apiKey, 'GET', '/api/v1/devices')).statusCode);
    const deviceStatuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${devices[0]!.token}` } });
      deviceStatuses.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json()).toMatchObject({ error: 'rate_limited' });
    }
    expect(userStatuses).toEqual([200, 200, 200, 429]);
    expect(deviceStatuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });
});
