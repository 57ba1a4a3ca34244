import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { call, createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../../testing/test-api.ts';

/**
 * Issue 11, item 22: a message sent through a named device shows that device from acceptance on,
 * while it is still pending (the dispatcher's `device_id` column stays null until it assigns it).
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function sendThrough(apiKey: string, deviceId: string | undefined, count = 1): Promise<string[]> {
  const res = await send(api.app, apiKey, { recipients: Array.from({ length: count }, uniquePhone), body: 'pinned', ...(deviceId && { device_id: deviceId }) });
  expect(res.statusCode).toBe(200);
  return res.json().message_ids as string[];
}

describe('a message sent through a named device', () => {
  it('shows the named device in GET /api/v1/sms/:id while pending, and the same once assigned', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const named = devices[1]!.id;
    const [id] = await sendThrough(apiKey, named);

    const pending = await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`);
    expect(pending.json()).toMatchObject({ id, state: 'pending', status: 'queued', device_id: named });
    const row = await api.db.message.findUniqueOrThrow({ where: { id: id! } });
    expect({ deviceId: row.deviceId, requestedDeviceId: row.requestedDeviceId }).toEqual({ deviceId: null, requestedDeviceId: named });

    await assignMessages(api.sql, { assignments: [{ id: id!, deviceId: named }], now: new Date() });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json()).toMatchObject({ id, state: 'assigned', device_id: named });
  });

  it('shows the named device in the list, and the device_id filter finds it while pending', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [named, other] = [devices[0]!.id, devices[1]!.id];
    const pinned = await sendThrough(apiKey, named, 2);
    const [free] = await sendThrough(apiKey, undefined);

    const all = (await call(api.app, apiKey, 'GET', '/api/v1/sms')).json();
    expect(Object.fromEntries(all.data.map((m: { id: string; device_id: string | null }) => [m.id, m.device_id]))).toEqual({
      [pinned[0]!]: named,
      [pinned[1]!]: named,
      [free!]: null,
    });

    const byNamed = (await call(api.app, apiKey, 'GET', `/api/v1/sms?device_id=${named}`)).json();
    expect({ ids: byNamed.data.map((m: { id: string }) => m.id).sort(), total: byNamed.total }).toEqual({ ids: [...pinned].sort(), total: 2 });
    const byOther = (await call(api.app, apiKey, 'GET', `/api/v1/sms?device_id=${other}`)).json();
    expect(byOther.total).toBe(0);
  });

  it('keeps device_id null for a round-robin message until it is assigned, and finds it by its device after', async () => {
    const { apiKey, deviceId } = await createTestUser(api.db);
    const [id] = await sendThrough(apiKey, undefined);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json()).toMatchObject({ id, device_id: null });

    await assignMessages(api.sql, { assignments: [{ id: id!, deviceId: deviceId! }], now: new Date() });
    const list = (await call(api.app, apiKey, 'GET', `/api/v1/sms?device_id=${deviceId}`)).json();
    expect(list.data.map((m: { id: string; device_id: string }) => [m.id, m.device_id])).toEqual([[id, deviceId]]);
  });
});
