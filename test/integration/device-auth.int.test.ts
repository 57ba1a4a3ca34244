import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { deleteDevice } from '@smsgw/db';
import { createTestUser, uniquePhone as phone } from '@smsgw/api/testing';
import {
  api,
  UNAUTHORIZED,
  startDispatcher,
  assignedTo,
  asDevice,
  claim,
  claimIds,
  report,
  message,
  useDeviceProtocolApi,
} from '../support/device-protocol.ts';

/**
 * The device protocol's authentication and its answers to bad input (apps/api/src/routes/device-protocols/native):
 * a device token and nothing else opens it, and what a device sends wrong is a 4xx that changes nothing.
 */
useDeviceProtocolApi();

describe('device authentication', () => {
  const endpoints: ['GET' | 'POST', string, object?][] = [
    ['GET', '/api/v1/device/events'],
    ['GET', '/api/v1/device/messages'],
    ['POST', '/api/v1/device/reports', { reports: [{ id: randomUUID(), status: 'sent' }] }],
    ['POST', '/api/v1/device/heartbeat'],
  ];

  it.each(endpoints)('refuses a user API key on %s %s with 401', async (method, url, payload) => {
    const { apiKey } = await createTestUser(api.db);
    for (const headers of [{ 'x-api-key': apiKey }, { authorization: `Bearer ${apiKey}` }]) {
      const res = await api.app.inject({ method, url, headers, ...(payload && { payload }) });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
  });

  it.each(endpoints)('refuses %s %s without a token, or with an unknown one, with 401', async (method, url, payload) => {
    for (const headers of [{}, { authorization: `Bearer smsgw_dt_${randomBytes(24).toString('base64url')}` }, { authorization: 'Basic abc' }]) {
      const res = await api.app.inject({ method, url, headers, ...(payload && { payload }) });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
  });

  it('refuses a device token on the user API with 401', async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const { token } = devices[0]!;
    const attempts = [
      api.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { authorization: `Bearer ${token}` } }),
      api.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': token } }),
      api.app.inject({ method: 'POST', url: '/api/sms/send', headers: { authorization: `Bearer ${token}` }, payload: { recipients: [phone()], body: 'x' } }),
      api.app.inject({ method: 'GET', url: '/api/v1/devices', headers: { authorization: `Bearer ${token}` } }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
  });

  it("refuses a deleted device's token with 401", async () => {
    const { userId, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    expect((await asDevice(device.token, 'POST', '/api/v1/device/heartbeat')).statusCode).toBe(200);

    await deleteDevice(api.db, { userId, id: device.id });

    for (const res of [await asDevice(device.token, 'POST', '/api/v1/device/heartbeat'), await claim(device.token)]) {
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
  });

  it('lets a disabled device claim nothing: its assigned messages stay assigned', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const ids = await assignedTo(apiKey, device, 2);
    await api.db.device.update({ where: { id: device.id }, data: { enabled: false } });

    expect(await claimIds(device.token)).toEqual([]);
    expect((await Promise.all(ids.map(message))).map((m) => m.state)).toEqual(['assigned', 'assigned']);
  });
});
describe('bad input from a device', () => {
  const huge = (n: number) => Array.from({ length: n }, () => ({ id: randomUUID(), status: 'sent' }));
  const cases: [string, 'GET' | 'POST', string, string][] = [
    ['malformed JSON reports', 'POST', '/api/v1/device/reports', '{"reports": [{"id": '],
    ['reports that are not a list', 'POST', '/api/v1/device/reports', JSON.stringify({ reports: { id: 'x' } })],
    ['a report with a numeric id', 'POST', '/api/v1/device/reports', JSON.stringify({ reports: [{ id: 7, status: 'sent' }] })],
    ['an unknown status', 'POST', '/api/v1/device/reports', JSON.stringify({ reports: [{ id: randomUUID(), status: 'Delivered' }] })],
    ['100,000 reports', 'POST', '/api/v1/device/reports', JSON.stringify({ reports: huge(100_000) })],
    ['malformed JSON inbound', 'POST', '/api/v1/device/inbound', '{"messages": ['],
    ['inbound without a sender', 'POST', '/api/v1/device/inbound', JSON.stringify({ messages: [{ message: 'hi', received_at: new Date().toISOString() }] })],
    ['inbound with a bad date', 'POST', '/api/v1/device/inbound', JSON.stringify({ messages: [{ from: '+15550001', message: 'hi', received_at: 'now' }] })],
    ['a JSON string body', 'POST', '/api/v1/device/reports', '"sent"'],
    ['a negative claim limit', 'GET', '/api/v1/device/messages?limit=-5', ''],
  ];

  it.each(cases)('answers %s with a 4xx JSON error and changes nothing', async (_, method, url, payload) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const [id] = await assignedTo(apiKey, device, 1);
    const before = await message(id!);

    const res = await api.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${device.token}`, ...(payload && { 'content-type': 'application/json' }) },
      ...(payload && { payload }),
    });

    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.json()).sort()).toEqual(['error', 'message']);
    expect(await message(id!)).toEqual(before);
    expect(await api.db.receivedMessage.count({ where: { deviceId: device.id } })).toBe(0);
  });

  it('takes NUL characters in a failure reason and in an incoming SMS without a 5xx', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const [id] = await assignedTo(apiKey, device, 1);
    expect(await claimIds(device.token)).toEqual([id]);

    const failed = await report(device.token, [{ id, status: 'failed', error: 'no\u0000credit' }]);
    expect(failed.statusCode).toBe(202);
    const inbound = await asDevice(device.token, 'POST', '/api/v1/device/inbound', {
      messages: [{ from: '+1555\u00000001', message: 'he\u0000llo', received_at: new Date().toISOString() }],
    });
    expect({ status: inbound.statusCode, body: inbound.json() }).toEqual({ status: 202, body: { stored: 1, duplicates: 0 } });

    await vi.waitFor(async () => expect(await message(id!)).toMatchObject({ state: 'failed', error: 'no\uFFFDcredit' }), { timeout: 15_000 });
    expect(await api.db.receivedMessage.findFirst({ where: { deviceId: device.id } })).toMatchObject({ from: '+1555\uFFFD0001', body: 'he\uFFFDllo' });
  });
});
