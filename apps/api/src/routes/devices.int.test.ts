import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@smsgw/core';
import { call, createTestUser, startTestApi, type TestApi, type Method } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TOKEN = /^smsgw_dt_[A-Za-z0-9_-]{43}$/;
const NOT_FOUND = { error: 'not_found', message: 'Device not found' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

/** A user without devices, who registers one through the API; the device then makes a request (so it is available). */
async function userWithRegisteredDevice(name = 'Pixel 8') {
  const user = await createTestUser(api.db, { devices: 0 });
  const res = await call(api.app, user.apiKey, 'POST', '/api/v1/devices', { name });
  expect(res.statusCode).toBe(201);
  const { token } = res.json() as { token: string };
  const heartbeat = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${token}` } });
  expect(heartbeat.statusCode).toBe(200);
  const record = (await call(api.app, user.apiKey, 'GET', `/api/v1/devices/${res.json().id}`)).json();
  return { ...user, device: { ...record, token } as { id: string; token: string; [field: string]: unknown } };
}

const secondsAgo = (seconds: number) => new Date(Date.now() - seconds * 1000);

describe('POST /api/v1/devices', () => {
  it('registers a native device: 201, the token shown once with the smsgw_dt_ prefix, available only once it connects', async () => {
    const { apiKey, user } = await createTestUser(api.db, { devices: 0 });
    const res = await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'Pixel 8' });

    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String),
      name: 'Pixel 8',
      enabled: true,
      protocol: 'native',
      available: false,
      connection: null,
      last_seen_at: null,
      app_version: null,
      sim_cards: null,
      warnings: [],
      health: { status: 'offline', reasons: ['not_connected'], last_seen_at: null, connection: null, app_version: null, battery: null, signal: null },
      rate_limit_per_minute: null,
      rate_limit_per_hour: null,
      rate_limit_per_day: null,
      segments_per_hour: null,
      segments_per_day: null,
      segments_per_month: null,
      unique_recipients_per_month: null,
      twilio_sms_url: null,
      sims: [],
      usage: {
        segments_per_hour: { limit: null, used: 0, resets_at: null },
        segments_per_day: { limit: null, used: 0, resets_at: expect.stringMatching(ISO_MS) },
        segments_per_month: { limit: null, used: 0, resets_at: expect.stringMatching(ISO_MS) },
        unique_recipients_per_month: { limit: null, used: 0, resets_at: expect.stringMatching(ISO_MS) },
        sims: [],
      },
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
      token: expect.stringMatching(TOKEN),
    });

    const before = Date.now();
    await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${created.token}` } });
    const seen = (await call(api.app, apiKey, 'GET', `/api/v1/devices/${created.id}`)).json();
    expect(seen).toMatchObject({ available: true, connection: 'requests', last_seen_at: expect.stringMatching(ISO_MS) });
    expect(Date.parse(seen.last_seen_at)).toBeGreaterThanOrEqual(before - 1000);

    const row = await api.db.device.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.userId).toBe(user.id);
    // Only the SHA-256 of the token is stored.
    expect(Buffer.from(row.tokenHash).equals(createHash('sha256').update(created.token).digest())).toBe(true);
  });

  it('never shows the token again: not in the list, not in GET', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    const { token, ...record } = device;

    const listed = await call(api.app, apiKey, 'GET', '/api/v1/devices');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({ data: [record] });
    const one = await call(api.app, apiKey, 'GET', `/api/v1/devices/${device.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(record);
    expect(listed.body + one.body).not.toContain(token);
  });

  it.each([
    ['the name is missing', {}, 'name'],
    ['the name is empty', { name: '' }, 'name'],
    ['the name is longer than 100 characters', { name: 'd'.repeat(101) }, 'name'],
    ['a field is unknown', { name: 'x', token: 'mine' }, 'token'],
  ])('refuses with 400 invalid_request when %s, registering nothing', async (_name, payload, field) => {
    const { apiKey, user } = await createTestUser(api.db, { devices: 0 });
    const res = await call(api.app, apiKey, 'POST', '/api/v1/devices', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(field) });
    expect(await api.db.device.count({ where: { userId: user.id } })).toBe(0);
  });

  it('is 401 without credentials', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/devices', payload: { name: 'x' } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

describe('GET /api/v1/devices', () => {
  it("lists only the caller's devices, oldest first", async () => {
    const alice = await userWithRegisteredDevice('alice phone 1');
    const second = (await call(api.app, alice.apiKey, 'POST', '/api/v1/devices', { name: 'alice phone 2' })).json();
    const bob = await userWithRegisteredDevice('bob phone');

    const aliceList = (await call(api.app, alice.apiKey, 'GET', '/api/v1/devices')).json().data as { id: string }[];
    expect(aliceList.map((d) => d.id)).toEqual([alice.device.id, second.id]);
    const bobList = (await call(api.app, bob.apiKey, 'GET', '/api/v1/devices')).json().data as { id: string }[];
    expect(bobList.map((d) => d.id)).toEqual([bob.device.id]);
  });
});

describe('availability', () => {
  async function available(apiKey: string, id: string): Promise<boolean> {
    const one = (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json();
    const listed = (await call(api.app, apiKey, 'GET', '/api/v1/devices')).json().data.find((d: { id: string }) => d.id === id);
    expect(listed.available).toBe(one.available);
    return one.available;
  }

  it('is false once the device was last seen more than DEVICE_AVAILABLE_SECONDS ago, true just inside', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    const limit = api.config.DEVICE_AVAILABLE_SECONDS;

    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: secondsAgo(limit + 60) } });
    expect(await available(apiKey, device.id)).toBe(false);

    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: secondsAgo(limit - 60) } });
    expect(await available(apiKey, device.id)).toBe(true);
  });

  it('is false for a device never seen', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: null } });
    const record = (await call(api.app, apiKey, 'GET', `/api/v1/devices/${device.id}`)).json();
    expect(record).toMatchObject({ available: false, last_seen_at: null });
  });

  it('is false while the device is disabled, however recently seen, and true again once enabled', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();

    const disabled = await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, { enabled: false });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json()).toMatchObject({ enabled: false, available: false });
    expect(await available(apiKey, device.id)).toBe(false);

    const enabled = await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ enabled: true, available: true });
  });
});

describe('PATCH /api/v1/devices/:id', () => {
  it('renames a device and moves updated_at forward, leaving the rest alone', async () => {
    const { apiKey, device } = await userWithRegisteredDevice('old name');
    await api.db.device.update({ where: { id: device.id }, data: { updatedAt: new Date('2026-01-01T00:00:00.000Z') } });

    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, { name: 'new name' });
    expect(res.statusCode).toBe(200);
    const record = res.json();
    expect(record).toMatchObject({ id: device.id, name: 'new name', enabled: true, available: true, created_at: device.created_at });
    expect(Date.parse(record.updated_at)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00.000Z'));
    expect(record).not.toHaveProperty('token');
    expect((await call(api.app, apiKey, 'GET', `/api/v1/devices/${device.id}`)).json().name).toBe('new name');
  });

  it('changes name and enabled together', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, { name: 'spare', enabled: false });
    expect(res.json()).toMatchObject({ name: 'spare', enabled: false });
    const row = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect({ name: row.name, enabled: row.enabled }).toEqual({ name: 'spare', enabled: false });
  });

  it.each([
    ['the body is empty', {}, 'body'],
    ['a field is unknown', { color: 'red' }, 'color'],
    ['the name is empty', { name: '' }, 'name'],
    ['enabled is a string (not coerced)', { enabled: 'false' }, 'enabled'],
    ['enabled is null', { enabled: null }, 'enabled'],
  ])('refuses with 400 invalid_request when %s, changing nothing', async (_name, payload, named) => {
    const { apiKey, device } = await userWithRegisteredDevice('unchanged');
    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(named) });
    const row = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect({ name: row.name, enabled: row.enabled }).toEqual({ name: 'unchanged', enabled: true });
  });
});

describe("another user's device, and ids that are not devices", () => {
  it('answers 404 to GET, PATCH and DELETE of a device of another user, which stays as it was', async () => {
    const owner = await userWithRegisteredDevice('owned');
    const intruder = await createTestUser(api.db, { devices: 0 });
    const url = `/api/v1/devices/${owner.device.id}`;

    for (const [method, payload] of [['GET'], ['PATCH', { name: 'stolen', enabled: false }], ['DELETE']] as [Method, unknown?][]) {
      const res = await call(api.app, intruder.apiKey, method, url, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
    const row = await api.db.device.findUniqueOrThrow({ where: { id: owner.device.id } });
    expect({ name: row.name, enabled: row.enabled, deletedAt: row.deletedAt }).toEqual({ name: 'owned', enabled: true, deletedAt: null });
    expect((await call(api.app, intruder.apiKey, 'GET', '/api/v1/devices')).json()).toEqual({ data: [] });
  });

  it.each([['not-a-uuid'], ['12345'], [newId()]])('answers 404 to GET, PATCH and DELETE of the id %j', async (id) => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as [Method, unknown?][]) {
      const res = await call(api.app, apiKey, method, `/api/v1/devices/${id}`, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });
});

describe('DELETE /api/v1/devices/:id', () => {
  it('deletes a device: 204, then 404 to GET, PATCH and DELETE, and gone from the list', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    const kept = (await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'kept' })).json();

    const res = await call(api.app, apiKey, 'DELETE', `/api/v1/devices/${device.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    for (const [method, payload] of [['GET'], ['PATCH', { enabled: true }], ['DELETE']] as [Method, unknown?][]) {
      const after = await call(api.app, apiKey, method, `/api/v1/devices/${device.id}`, payload);
      expect({ method, status: after.statusCode, body: after.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
    const listed = (await call(api.app, apiKey, 'GET', '/api/v1/devices')).json().data as { id: string }[];
    expect(listed.map((d) => d.id)).toEqual([kept.id]);
  });

  it('keeps the row, disabled, so that its messages still name it', async () => {
    const { apiKey, device } = await userWithRegisteredDevice();
    expect((await call(api.app, apiKey, 'DELETE', `/api/v1/devices/${device.id}`)).statusCode).toBe(204);
    const row = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect(row.enabled).toBe(false);
    expect(row.deletedAt).toBeInstanceOf(Date);
  });
});
