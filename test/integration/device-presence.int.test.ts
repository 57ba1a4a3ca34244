import { describe, expect, it, vi } from 'vitest';
import { DeviceClient } from '@smsgw/client';
import { createTestUser, send, uniquePhone as phone } from '@smsgw/api/testing';
import { api, ISO_MS, startDispatcher, streamStop, listening, asDevice, message, useDeviceProtocolApi } from '../support/device-protocol.ts';

/**
 * A device's presence on the device protocol (apps/api/src/routes/device-protocols/native): its heartbeat and its
 * event stream keep it available, and the stream wakes it up when a message is assigned to it.
 */
useDeviceProtocolApi();

describe('POST /api/v1/device/heartbeat', () => {
  it('answers 200 with the server time and makes a stale device (one that holds no stream) available again', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const stale = new Date(Date.now() - 2 * api.config.DEVICE_AVAILABLE_SECONDS * 1000);
    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: stale } });
    const refused = await send(api.app, apiKey, { recipients: [phone()], body: 'nobody to send it' });
    expect({ status: refused.statusCode, error: refused.json().error }).toEqual({ status: 503, error: 'no_devices' });

    const started = Date.now();
    const res = await asDevice(device.token, 'POST', '/api/v1/device/heartbeat');

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', server_time: expect.stringMatching(ISO_MS) });
    const seen = (await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).lastSeenAt!;
    expect(seen.getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect((await send(api.app, apiKey, { recipients: [phone()], body: 'back again' })).statusCode).toBe(200);
  });
});

describe('GET /api/v1/device/events', () => {
  it('sends a wakeup at once on connect and another when a message is assigned to the device', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const client = new DeviceClient(await listening(), device.token);
    const events: string[] = [];
    const stop = streamStop();

    const stream = client.events((event) => events.push(event), stop.signal);
    await vi.waitFor(() => expect(events).toEqual(['wakeup']), { timeout: 5_000 });

    const sent = await send(api.app, apiKey, { recipients: [phone()], body: 'ring ring' });
    expect(sent.statusCode).toBe(200);
    await vi.waitFor(() => expect(events).toEqual(['wakeup', 'wakeup']), { timeout: 15_000 });
    expect(await message(sent.json().message_ids[0])).toMatchObject({ state: 'assigned', deviceId: device.id });

    stop.abort();
    await stream;
  });

  it('counts an open stream as the device being seen', async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: new Date(Date.now() - 3600_000) } });
    const client = new DeviceClient(await listening(), device.token);
    const events: string[] = [];
    const stop = streamStop();

    const stream = client.events((event) => events.push(event), stop.signal);
    await vi.waitFor(() => expect(events).toEqual(['wakeup']), { timeout: 5_000 });

    const seen = (await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).lastSeenAt!;
    expect(Date.now() - seen.getTime()).toBeLessThan(60_000);
    stop.abort();
    await stream;
  });

  it('refuses a user API key: the stream does not open', async () => {
    const { apiKey } = await createTestUser(api.db);
    const client = new DeviceClient(await listening(), apiKey);
    const stop = streamStop();
    await expect(client.events(() => undefined, stop.signal)).rejects.toThrow('HTTP 401');
  });
});
