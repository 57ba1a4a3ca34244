/**
 * Availability from real connection (docs/devices.md, "Availability"): registration never counts;
 * an event stream held (plus a grace) or, for a device without a stream, a recent request does.
 * The rule is stated twice, as a pure function (packages/core) and as SQL (packages/db); the first
 * test holds them together.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { availabilityWindows, isDeviceAvailable, type DeviceLiveness } from '@smsgw/core';
import { availableDevices, createDevice } from '@smsgw/db';
import { DeviceClient } from '@smsgw/client';
import { buildApp } from '@smsgw/api';
import { call, createTestUser, send, startTestApi, uniquePhone as phone, type TestApi } from '@smsgw/api/testing';

let api: TestApi;
let baseUrl: string;
const streams: AbortController[] = [];

beforeAll(async () => {
  // A short grace and keepalive, so that a closed stream lapses within the test.
  api = await startTestApi({ DEVICE_STREAM_GRACE_SECONDS: '1', DEVICE_HEARTBEAT_SECONDS: '1' });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
});
afterEach(() => {
  for (const stream of streams.splice(0)) stream.abort();
});
afterAll(async () => {
  await api?.close();
});

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);

describe('the availability rule', () => {
  it('is the same in packages/core and in the SQL the dispatcher and the send use', async () => {
    const { userId } = await createTestUser(api.db, { devices: 0 });
    const window = api.config.DEVICE_AVAILABLE_SECONDS;
    const cases: DeviceLiveness[] = [];
    // The stream's close (innermost): never closed, closed within the grace, closed past it, and a close older than the last refresh.
    for (const enabled of [true, false])
      for (const lastSeenAt of [null, ago(1), ago(window - 10), ago(window + 10)])
        for (const streamSeenAt of [null, ago(1), ago(5), ago(window - 10), ago(window + 10)])
          for (const streamClosedAt of [null, ago(0.5), ago(1.5), ago(3), ago(window + 20)]) cases.push({ enabled, lastSeenAt, streamSeenAt, streamClosedAt });
    const ids: string[] = [];
    for (const [i, c] of cases.entries()) {
      const { device } = await createDevice(api.db, { userId, name: `case-${i}` });
      await api.db.device.update({ where: { id: device.id }, data: c });
      ids.push(device.id);
    }
    const now = new Date();
    const windows = availabilityWindows(api.config, now);

    const bySql = new Set((await availableDevices(api.sql, { userIds: [userId], windows })).get(userId) ?? []);

    const byCore = new Set(ids.filter((_, i) => isDeviceAvailable(cases[i]!, windows)));
    expect(bySql).toEqual(byCore);
    // Both kinds of case occur: the comparison is not vacuous.
    expect(byCore.size).toBeGreaterThan(3);
    expect(byCore.size).toBeLessThan(cases.length - 3);
  });
});

describe('a device is available only when connected', () => {
  it('does not count registration: a device never connected is not available and a send is refused', async () => {
    const { apiKey, userId } = await createTestUser(api.db, { devices: 0 });
    const created = await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'never connected' });
    expect(created.json()).toMatchObject({ available: false, connection: null, last_seen_at: null });

    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'nobody' });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 503,
      body: { error: 'no_devices', message: 'No devices available to send messages' },
    });
    expect(await api.db.message.count({ where: { userId } })).toBe(0);
  });

  it('counts a held event stream, keeps the device for the grace after it closes, then not', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const created = await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'streaming' });
    const { id, token } = created.json();
    const record = async () => (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json();

    const stop = new AbortController();
    streams.push(stop);
    const events: string[] = [];
    const stream = new DeviceClient(baseUrl, token).events((e) => events.push(e), stop.signal);
    await vi.waitFor(() => expect(events).toContain('wakeup'));
    await vi.waitFor(async () => expect(await record()).toMatchObject({ available: true, connection: 'stream' }));
    // Held for longer than keepalive + grace: the keepalives keep it available.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await record()).toMatchObject({ available: true, connection: 'stream' });
    expect((await send(api.app, apiKey, { recipients: [phone()], body: 'streaming' })).statusCode).toBe(200);

    stop.abort();
    await stream;
    const closedAt = Date.now();
    // Within the grace (keepalive 1 s + grace 1 s) it still counts; after it, no longer, although
    // its last request is recent.
    await vi.waitFor(async () => expect(await record()).toMatchObject({ available: false, connection: null }), { timeout: 10_000, interval: 100 });
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(1000);
    const refused = await send(api.app, apiKey, { recipients: [phone()], body: 'gone' });
    expect(refused.json()).toMatchObject({ error: 'no_devices' });
  });

  it('keeps a device whose stream closed on one API process while it holds another on a second one', async () => {
    // A second API process on the same database and queue prefix.
    const other = await buildApp({ config: api.config, logger: false });
    await other.listen({ port: 0, host: '127.0.0.1' });
    const otherUrl = `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`;
    const here = new AbortController();
    const there = new AbortController();
    streams.push(here, there);
    try {
      const { apiKey } = await createTestUser(api.db, { devices: 0 });
      const { id, token } = (await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'two processes' })).json();
      const record = async () => (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json();
      const woken: string[] = [];
      const hereStream = new DeviceClient(baseUrl, token).events(() => woken.push('here'), here.signal);
      void new DeviceClient(otherUrl, token).events(() => woken.push('there'), there.signal);
      await vi.waitFor(() => expect(woken).toEqual(expect.arrayContaining(['here', 'there'])));

      here.abort();
      await hereStream;
      await vi.waitFor(async () => expect((await api.db.device.findUniqueOrThrow({ where: { id } })).streamClosedAt).not.toBeNull());
      // Several times keepalive + grace (1 s + 1 s): the other process's keepalives undo the close.
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        expect(await record()).toMatchObject({ available: true, connection: 'stream' });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      there.abort();
      await other.close();
    }
  });

  it('judges a device that holds no stream by its last request (DEVICE_AVAILABLE_SECONDS)', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const { id, token } = (await call(api.app, apiKey, 'POST', '/api/v1/devices', { name: 'poller' })).json();
    const heartbeat = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${token}` } });
    expect(heartbeat.statusCode).toBe(200);

    expect((await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json()).toMatchObject({ available: true, connection: 'requests' });
    await api.db.device.update({ where: { id }, data: { lastSeenAt: ago(api.config.DEVICE_AVAILABLE_SECONDS + 5) } });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json()).toMatchObject({ available: false, connection: null });
  });
});
