import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HEALTH_REASONS } from '@smsgw/core';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { enrolConnectedPhone, phoneRequest, signedHeaders } from '../testing/test-phone.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ DEVICE_OFFLINE_AFTER_SECONDS: '90' });
});
afterAll(async () => {
  await api?.close();
});

const heartbeat = (token: string, body?: unknown) =>
  api.app.inject({
    method: 'POST',
    url: '/api/v1/device/heartbeat',
    headers: { authorization: `Bearer ${token}` },
    ...(body !== undefined && { payload: body as object }),
  });

async function nativeDevice() {
  const { apiKey, devices } = await createTestUser(api.db);
  const { id, token } = devices[0]!;
  const health = async () => (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json().health;
  return { apiKey, id, token, health };
}

describe('health from the native heartbeat', () => {
  it('shows what the heartbeat body reports, keeps fields a later heartbeat leaves out, and is online while all is well', async () => {
    const device = await nativeDevice();
    expect((await heartbeat(device.token, { battery_level: 87, charging: true, signal_dbm: -71, network: 'registered' })).statusCode).toBe(200);
    expect(await device.health()).toEqual({
      status: 'online',
      reasons: [],
      last_seen_at: expect.any(String),
      connection: 'poll',
      app_version: null,
      battery: { level: 87, charging: true },
      signal: { dbm: -71, network: 'registered' },
    });
    expect((await heartbeat(device.token, { signal_dbm: -95 })).statusCode).toBe(200);
    expect(await device.health()).toMatchObject({ battery: { level: 87, charging: true }, signal: { dbm: -95, network: 'registered' } });
    // Without a body, as before: only seen.
    expect((await heartbeat(device.token)).statusCode).toBe(200);
    expect((await call(api.app, device.apiKey, 'GET', '/api/v1/devices')).json().data[0].health.battery).toEqual({ level: 87, charging: true });
  });

  it('writes the heartbeats of devices that arrive together in one statement, each device its own', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 4 });
    const query = vi.spyOn(api.app.sql, 'query');
    try {
      const answers = await Promise.all(devices.map((d, i) => heartbeat(d.token, { battery_level: 40 + i })));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
      expect(query.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('health_reported_at = $2'))).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
    const listed = (await call(api.app, apiKey, 'GET', '/api/v1/devices')).json().data as { id: string; health: { battery: { level: number } } }[];
    expect(devices.map((d) => listed.find((l) => l.id === d.id)?.health.battery.level)).toEqual([40, 41, 42, 43]);
  });

  it('is degraded with low battery when not charging, and with no service; each reason named', async () => {
    const device = await nativeDevice();
    await heartbeat(device.token, { battery_level: 20, charging: false, network: 'searching' });
    expect(await device.health()).toMatchObject({ status: 'degraded', reasons: ['low_battery', 'no_service'] });
    await heartbeat(device.token, { charging: true, network: 'roaming' });
    expect(await device.health()).toMatchObject({ status: 'online', reasons: [] });
    await heartbeat(device.token, { network: 'no_sim' });
    expect(await device.health()).toMatchObject({ status: 'degraded', reasons: ['no_service'] });
  });

  it.each([
    ['a battery level over 100', { battery_level: 101 }],
    ['a fractional battery level', { battery_level: 50.5 }],
    ['charging as text', { charging: 'yes' }],
    ['a positive signal', { signal_dbm: 5 }],
    ['a network label that is not text', { battery_level: 50, network: 4 }],
    ['a battery level as text', { battery_level: '87', network: 'LTE' }],
    ['an unknown field', { battery_level: 50, temperature: 40 }],
    ['an array', [1]],
  ])('refuses %s with a 400 JSON error and stores nothing', async (_name, body) => {
    const device = await nativeDevice();
    await heartbeat(device.token, { battery_level: 60, charging: false });
    const before = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    const res = await heartbeat(device.token, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.any(String) });
    const after = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect(after).toEqual(before);
  });

  it('stores the readings of a heartbeat whose network label it does not know, the network as unknown', async () => {
    const device = await nativeDevice();
    expect((await heartbeat(device.token, { battery_level: 10, charging: false, signal_dbm: -90, network: 'searching' })).statusCode).toBe(200);
    expect(await device.health()).toMatchObject({ status: 'degraded', reasons: ['low_battery', 'no_service'] });

    const res = await heartbeat(device.token, { battery_level: 64, charging: true, signal_dbm: -77, network: 'LTE' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', server_time: expect.any(String) });
    // Unknown is not no service: the label it replaced does not stand.
    expect(await device.health()).toMatchObject({
      status: 'online',
      reasons: [],
      battery: { level: 64, charging: true },
      signal: { dbm: -77, network: null },
    });
    expect((await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).network).toBeNull();
    // A known label after it is stored again.
    await heartbeat(device.token, { network: 'roaming' });
    expect((await device.health()).signal).toEqual({ dbm: -77, network: 'roaming' });
  });

  it('is degraded after three send failures in a row, counted from the messages, and online again after a sent one', async () => {
    const device = await nativeDevice();
    await heartbeat(device.token);
    const { userId } = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    const messages = [];
    for (let i = 0; i < 7; i++) {
      messages.push(
        await api.db.message.create({
          data: { id: crypto.randomUUID(), userId, deviceId: device.id, to: '+15550000000', body: 'x', segments: 1, encoding: 'GSM_7', state: 'sending' },
        }),
      );
    }
    const move = (id: string, state: 'failed' | 'sent') => api.sql.query('UPDATE messages SET state = $2 WHERE id = $1', [id, state]);
    await move(messages[0]!.id, 'failed');
    await move(messages[1]!.id, 'failed');
    expect(await device.health()).toMatchObject({ status: 'online' });
    await move(messages[2]!.id, 'failed');
    expect(await device.health()).toMatchObject({ status: 'degraded', reasons: ['send_failures'] });
    await move(messages[3]!.id, 'sent');
    expect(await device.health()).toMatchObject({ status: 'online', reasons: [] });
    // One statement that fails several (as a report of a batch does) counts each of them.
    await api.sql.query(`WITH moved AS (UPDATE messages SET state = 'failed' WHERE id = ANY($1::uuid[]) RETURNING id) SELECT count(*) FROM moved`, [
      messages.slice(4).map((m) => m.id),
    ]);
    expect(await device.health()).toMatchObject({ status: 'degraded', reasons: ['send_failures'] });
  });

  it('is offline with a reason when never connected, or disabled', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const created = (await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'modem' })).json();
    expect(created.health).toEqual({
      status: 'offline',
      reasons: ['not_connected'],
      last_seen_at: null,
      connection: null,
      app_version: null,
      battery: null,
      signal: null,
    });
    await heartbeat(created.token);
    const disabled = (await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${created.id}`, { enabled: false })).json();
    expect(disabled.health).toMatchObject({ status: 'offline', reasons: ['disabled'] });
  });
});

describe('health from the SMS Gate system:ping webhook', () => {
  async function phone() {
    const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
    const enrolled = await enrolConnectedPhone(api.app, api.db, userId);
    const auth = { authorization: `Bearer ${enrolled.token}` };
    const webhooks = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
    const settings = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json();
    return { ...enrolled, apiKey, auth, webhooks, settings };
  }

  function ping(p: Awaited<ReturnType<typeof phone>>, checks: Record<string, unknown>, key = p.settings.webhooks.signing_key) {
    const hook = p.webhooks.find((w: { event: string }) => w.event === 'system:ping');
    const raw = JSON.stringify({
      id: 'ping-1',
      webhookId: hook.id,
      event: 'system:ping',
      deviceId: p.id,
      payload: { health: { status: 'pass', checks, version: '1.68.0', releaseId: 68 } },
    });
    return phoneRequest(api.app, 'POST', new URL(hook.url).pathname, { raw, headers: signedHeaders(key, raw) });
  }

  it('lists system:ping next to sms:received with stable ids and the same signed URL, and asks for a ping every half of the offline timer', async () => {
    const p = await phone();
    expect(p.webhooks).toEqual([
      { id: expect.stringMatching(/^smsgw-/), url: expect.stringContaining(`/mobile/v1/inbound/${p.id}/`), event: 'sms:received' },
      { id: expect.stringMatching(/^smsgw-/), url: p.webhooks[0].url, event: 'system:ping' },
    ]);
    expect(p.webhooks[0].id).not.toBe(p.webhooks[1].id);
    expect((await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', p.auth)).json()).toEqual(p.webhooks);
    expect(p.settings.ping).toEqual({ interval_seconds: 45 });
  });

  it('lists no system:ping for an app that does not know it (before v1.16)', async () => {
    const p = await phone();
    const old = await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', { ...p.auth, headers: { 'user-agent': 'me.capcom.smsgateway/1.15.2' } });
    expect(old.json().map((w: { event: string }) => w.event)).toEqual(['sms:received']);
  });

  it('records battery, charging and a failed cellular check from a signed ping', async () => {
    const p = await phone();
    const res = await ping(p, {
      'battery:level': { status: 'warn', observedValue: 12, observedUnit: 'percent', description: 'Battery level in percent' },
      'battery:charging': { status: 'pass', observedValue: 0, observedUnit: 'boolean' },
      'connection:cellular': { status: 'fail', observedValue: 0 },
      'messages:failed': { status: 'pass', observedValue: 0 },
    });
    expect(res.statusCode).toBe(202);
    const health = (await call(api.app, p.apiKey, 'GET', `/api/v1/devices/${p.id}`)).json().health;
    expect(health).toEqual({
      status: 'degraded',
      reasons: ['low_battery', 'no_service'],
      last_seen_at: expect.any(String),
      connection: 'poll',
      app_version: '1.68.0',
      battery: { level: 12, charging: false },
      signal: { dbm: null, network: 'none' },
    });
  });

  it('refuses a ping signed with another key (401) and records nothing', async () => {
    const p = await phone();
    const res = await ping(p, { 'battery:level': { status: 'pass', observedValue: 80 } }, 'not-the-key');
    expect(res.statusCode).toBe(401);
    expect((await call(api.app, p.apiKey, 'GET', `/api/v1/devices/${p.id}`)).json().health.battery).toBeNull();
  });
});

describe('smsgw_devices on /metrics', () => {
  const gauge = async () => {
    const text = (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
    return Object.fromEntries(
      ['online', 'degraded', 'offline'].map((status) => [status, Number(new RegExp(`^smsgw_devices\\{health="${status}"\\} (\\d+)$`, 'm').exec(text)?.[1])]),
    );
  };

  it('counts enabled devices by their announced health status (never announced: offline), disabled ones not at all', async () => {
    const before = await gauge();
    const { devices } = await createTestUser(api.db, { devices: 4 });
    await api.db.device.update({ where: { id: devices[0]!.id }, data: { healthStatus: 'online' } });
    await api.db.device.update({ where: { id: devices[1]!.id }, data: { healthStatus: 'degraded' } });
    await api.db.device.update({ where: { id: devices[2]!.id }, data: { healthStatus: 'online', enabled: false } });
    expect(await gauge()).toEqual({ online: before.online! + 1, degraded: before.degraded! + 1, offline: before.offline! + 1 });
  });

  it('counts enabled devices by each reason of their announced health (smsgw_device_health_reasons)', async () => {
    const reasons = async () => {
      const text = (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
      return Object.fromEntries([...text.matchAll(/^smsgw_device_health_reasons\{reason="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    };
    const before = await reasons();
    expect(Object.keys(before).sort()).toEqual([...HEALTH_REASONS].sort());
    const { devices } = await createTestUser(api.db, { devices: 3 });
    await api.db.device.update({ where: { id: devices[0]!.id }, data: { healthStatus: 'degraded', healthReasons: ['budget_exhausted', 'low_battery'] } });
    await api.db.device.update({ where: { id: devices[1]!.id }, data: { healthStatus: 'degraded', healthReasons: ['budget_exhausted'] } });
    await api.db.device.update({ where: { id: devices[2]!.id }, data: { healthStatus: 'degraded', healthReasons: ['low_battery'], enabled: false } });
    expect(await reasons()).toEqual({ ...before, budget_exhausted: before.budget_exhausted! + 2, low_battery: before.low_battery! + 1 });
  });
});
