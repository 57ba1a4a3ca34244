import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { enrolPhone, phoneRequest } from '../testing/test-phone.ts';

/** Setting a device's rate limits (issue 16, item 3), and what an SMS Gate phone is told of them. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

function patch(apiKey: string, id: string, payload: unknown) {
  return api.app.inject({ method: 'PATCH', url: `/api/v1/devices/${id}`, headers: { 'x-api-key': apiKey }, payload: payload as object });
}

describe('device rate limits', () => {
  it('sets, shows and removes the limits; a field left out stays', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    const set = await patch(apiKey, id, { rate_limit_per_minute: 6, rate_limit_per_day: 500 });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ rate_limit_per_minute: 6, rate_limit_per_hour: null, rate_limit_per_day: 500 });
    const renamed = await patch(apiKey, id, { name: 'SIM 1' });
    expect(renamed.json()).toMatchObject({ name: 'SIM 1', rate_limit_per_minute: 6, rate_limit_per_day: 500 });
    const cleared = await patch(apiKey, id, { rate_limit_per_minute: null });
    expect(cleared.json()).toMatchObject({ rate_limit_per_minute: null, rate_limit_per_day: 500 });
    const listed = await api.app.inject({ method: 'GET', url: '/api/v1/devices', headers: { 'x-api-key': apiKey } });
    expect(listed.json().data[0]).toMatchObject({ rate_limit_per_minute: null, rate_limit_per_hour: null, rate_limit_per_day: 500 });
  });

  it.each([0, -1, 100_001, 1.5, '6', true])('refuses rate_limit_per_minute %j with 400 and changes nothing', async (value) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    await patch(apiKey, id, { rate_limit_per_hour: 30 });
    const res = await patch(apiKey, id, { rate_limit_per_minute: value, rate_limit_per_hour: 10 });
    expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_request' });
    const device = await api.db.device.findUniqueOrThrow({ where: { id } });
    expect([device.rateLimitPerMinute, device.rateLimitPerHour]).toEqual([null, 30]);
  });

  it('tells an SMS Gate phone its shortest limit in its settings, and nothing when it has none', async () => {
    const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const settings = async () => (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', { authorization: `Bearer ${phone.token}` })).json();
    expect((await settings()).messages).toBeUndefined();
    expect((await patch(apiKey, phone.id, { rate_limit_per_hour: 100, rate_limit_per_day: 500 })).statusCode).toBe(200);
    expect((await settings()).messages).toEqual({ limit_period: 'PerHour', limit_value: 100 });
  });
});
