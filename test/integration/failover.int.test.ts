/**
 * Failover without double sends (docs/devices.md, "Failover"): the native report's `retryable`,
 * the dispatcher that gives such a message to another device or fails it for good, quarantine,
 * Android's sending limit, and the immediate return of what an offline device never took. Both
 * apps in one process (the API by inject, dispatchers in this process).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { call, createTestUser, send, startTestApi, uniquePhone as phone, type TestApi, type TestDevice } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';

let api: TestApi;
const dispatchers: Dispatcher[] = [];

beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
});
afterAll(async () => {
  await api?.close();
});

async function startDispatcher(env: Record<string, string> = {}): Promise<void> {
  dispatchers.push(await startTestDispatcher(api, { SWEEP_INTERVAL_SECONDS: '1', LOG_LEVEL: process.env.FO_LOG ?? 'silent', ...env }));
}

function asDevice(token: string, method: 'GET' | 'POST', url: string, payload?: object) {
  return api.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
}

async function claimIds(device: TestDevice): Promise<string[]> {
  const res = await asDevice(device.token, 'GET', '/api/v1/device/messages');
  expect(res.statusCode).toBe(200);
  return (res.json().messages as { id: string }[]).map((m) => m.id);
}

async function report(device: TestDevice, reports: object[]): Promise<void> {
  const res = await asDevice(device.token, 'POST', '/api/v1/device/reports', { reports });
  expect(res.statusCode).toBe(202);
  expect(res.json().rejected).toEqual([]);
}

function message(id: string) {
  return api.db.message.findUniqueOrThrow({ where: { id } });
}

/** Sends one message (round-robin unless `deviceId`) and waits until the dispatcher assigned it; returns it with its device. */
async function sendAssigned(apiKey: string, devices: TestDevice[], deviceId?: string): Promise<{ id: string; device: TestDevice }> {
  const res = await send(api.app, apiKey, { recipients: [phone()], body: 'failover', ...(deviceId && { device_id: deviceId }) });
  expect(res.statusCode).toBe(200);
  const id = res.json().message_ids[0] as string;
  return { id, device: await assignedDevice(id, devices) };
}

/** Waits until the message is assigned to one of `devices` other than `not`, and returns that device. */
async function assignedDevice(id: string, devices: TestDevice[], not?: string): Promise<TestDevice> {
  return vi.waitFor(
    async () => {
      const row = await message(id);
      expect(row.state).toBe('assigned');
      const device = devices.find((d) => d.id === row.deviceId && d.id !== not);
      expect(device).toBeDefined();
      return device!;
    },
    { timeout: 15_000, interval: 50 },
  );
}

/** Claims the message as its device and reports it failed (retryably unless `retryable` says otherwise). */
async function failOn(device: TestDevice, id: string, error: string, retryable: boolean | 'absent' = true): Promise<void> {
  expect(await claimIds(device)).toContain(id);
  await report(device, [{ id, status: 'failed', error, ...(retryable !== 'absent' && { retryable }) }]);
}

const NO_SERVICE = 'Send result: RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)';

describe('a retryable failure', () => {
  it('goes to the user’s other device, which sends it; the record lists both attempts in order', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher();
    const { id, device: first } = await sendAssigned(apiKey, devices);
    await failOn(first, id, NO_SERVICE);

    const second = await assignedDevice(id, devices, first.id);
    expect(await claimIds(second)).toEqual([id]);
    expect(await claimIds(first)).toEqual([]);
    const sentAt = new Date().toISOString();
    await report(second, [{ id, status: 'sent', at: sentAt }]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });

    const record = (await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json();
    expect(record).toMatchObject({ status: 'sent', device_id: second.id, error: null });
    expect(record.attempts).toEqual([
      { device_id: first.id, error: NO_SERVICE, at: expect.stringMatching(/Z$/) },
      { device_id: second.id, error: null, at: sentAt },
    ]);
    const history = await api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });
    expect(history.map((e) => [e.state, e.deviceId])).toEqual([
      ['assigned', first.id],
      ['pending', first.id],
      ['assigned', second.id],
      ['sent', second.id],
    ]);
  });

  it('fails for good after MAX_SEND_ATTEMPTS devices, with every attempt’s error, and never returns to a device it failed on', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 3 });
    await startDispatcher({ MAX_SEND_ATTEMPTS: '2' });
    const { id, device: first } = await sendAssigned(apiKey, devices);
    await failOn(first, id, 'radio off');
    const second = await assignedDevice(id, devices, first.id);
    await failOn(second, id, 'no service');

    await vi.waitFor(async () => expect((await message(id)).state).toBe('failed'), { timeout: 15_000 });
    const record = (await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json();
    expect(record.error).toBe('Failed on every device tried (2): radio off; no service');
    expect(record.attempts.map((a: { device_id: string; error: string }) => [a.device_id, a.error])).toEqual([
      [first.id, 'radio off'],
      [second.id, 'no service'],
    ]);
  });

  it('fails at once when the user has no other enabled device', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await api.db.device.update({ where: { id: devices[1]!.id }, data: { enabled: false } });
    await startDispatcher();
    const { id, device } = await sendAssigned(apiKey, devices);
    await failOn(device, id, NO_SERVICE);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('failed'), { timeout: 15_000 });
    expect((await message(id)).error).toBe(NO_SERVICE);
  });

  it('of a named device is final: its message is never swapped', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher();
    const { id, device } = await sendAssigned(apiKey, devices, devices[1]!.id);
    expect(device.id).toBe(devices[1]!.id);
    await failOn(device, id, NO_SERVICE);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('failed'), { timeout: 15_000 });
    const row = await message(id);
    expect([row.deviceId, row.error]).toEqual([devices[1]!.id, NO_SERVICE]);
    expect(await api.db.messageEvent.count({ where: { messageId: id, state: 'assigned' } })).toBe(1);
  });

  it('reported twice, with two dispatchers, moves the message once and records one attempt', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher();
    await startDispatcher();
    const { id, device } = await sendAssigned(apiKey, devices);
    expect(await claimIds(device)).toContain(id);
    const failure = { id, status: 'failed', error: 'no service', retryable: true };
    await Promise.all([report(device, [failure]), report(device, [failure]), report(device, [failure, failure])]);
    await assignedDevice(id, devices, device.id);
    await vi.waitFor(async () => expect(await api.db.messageEvent.count({ where: { messageId: id } })).toBeGreaterThanOrEqual(3));
    expect(await api.db.messageEvent.count({ where: { messageId: id, state: 'pending' } })).toBe(1);
    expect((await message(id)).attempts).toHaveLength(1);
    expect((await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).retryableFailuresInARow).toBe(1);
  });
});

describe('a failure that may have left the device', () => {
  it('is final: no `retryable`, or `retryable: false`', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher();
    for (const retryable of ['absent', false] as const) {
      const { id, device } = await sendAssigned(apiKey, devices);
      await failOn(device, id, 'Network rejected the message', retryable);
      await vi.waitFor(async () => expect((await message(id)).state).toBe('failed'), { timeout: 15_000 });
      const record = (await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json();
      expect(record.attempts.map((a: { device_id: string; error: string }) => [a.device_id, a.error])).toEqual([[device.id, 'Network rejected the message']]);
      expect(await api.db.messageEvent.count({ where: { messageId: id, state: 'assigned' } })).toBe(1);
    }
  });
});

describe('`retryable` that is not a boolean', () => {
  it.each([
    ['a string', 'true'],
    ['a number', 1],
    ['null', null],
  ])('(%s) is a 400 invalid_request and changes nothing', async (_, retryable) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'failover' });
    const id = res.json().message_ids[0] as string;
    await assignMessages(api.sql, { assignments: [{ id, deviceId: devices[0]!.id }], now: new Date() });
    expect(await claimIds(devices[0]!)).toEqual([id]);
    const before = await message(id);
    const jobsBefore = await api.app.reportsQueue.getJobCounts();

    const refused = await asDevice(devices[0]!.token, 'POST', '/api/v1/device/reports', { reports: [{ id, status: 'failed', retryable }] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining('retryable') });
    expect(await message(id)).toEqual(before);
    expect(await api.app.reportsQueue.getJobCounts()).toEqual(jobsBefore);
  });
});

describe('quarantine and pause', () => {
  it('takes a device out of round-robin after QUARANTINE_AFTER_FAILURES retryable failures in a row, and shows it degraded', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher({ QUARANTINE_AFTER_FAILURES: '2', MAX_SEND_ATTEMPTS: '1' });
    const sick = devices[0]!;
    for (let i = 0; i < 2; i++) {
      const { id } = await sendAssigned(apiKey, devices, sick.id);
      await failOn(sick, id, NO_SERVICE);
      await vi.waitFor(async () => expect((await message(id)).state).toBe('failed'), { timeout: 15_000 });
    }
    const row = await vi.waitFor(async () => {
      const device = await api.db.device.findUniqueOrThrow({ where: { id: sick.id } });
      expect(device.pauseReason).toBe('quarantined');
      return device;
    });
    expect(row.pausedUntil!.getTime() - Date.now()).toBeGreaterThan(50_000);
    expect(row.pausedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect(row.quarantines).toBe(1);
    const health = (await call(api.app, apiKey, 'GET', `/api/v1/devices/${sick.id}`)).json().health;
    expect(health).toMatchObject({ status: 'degraded', reasons: expect.arrayContaining(['quarantined']) });

    for (let i = 0; i < 4; i++) expect((await sendAssigned(apiKey, devices)).device.id).toBe(devices[1]!.id);

    // Once the cool-down is over, the next retryable failure quarantines it again, for twice as long.
    await api.db.device.update({ where: { id: sick.id }, data: { pausedUntil: new Date(Date.now() - 1000) } });
    const { id: third } = await sendAssigned(apiKey, devices, sick.id);
    await failOn(sick, third, NO_SERVICE);
    const again = await vi.waitFor(async () => {
      const device = await api.db.device.findUniqueOrThrow({ where: { id: sick.id } });
      expect(device.quarantines).toBe(2);
      return device;
    });
    expect(again.pausedUntil!.getTime() - Date.now()).toBeGreaterThan(110_000);
    expect(again.pausedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(120_000);

    // A sent message ends the run: the next quarantine would start at 1 minute again.
    const { id: fine } = await sendAssigned(apiKey, devices, sick.id);
    expect(await claimIds(sick)).toContain(fine);
    await report(sick, [{ id: fine, status: 'sent' }]);
    await vi.waitFor(async () => {
      expect(await api.db.device.findUniqueOrThrow({ where: { id: sick.id } })).toMatchObject({ retryableFailuresInARow: 0, quarantines: 0 });
    });
  });

  it('pauses a device that reports Android’s sending limit for LIMIT_EXCEEDED_PAUSE_SECONDS, and gives the message to another', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    await startDispatcher({ LIMIT_EXCEEDED_PAUSE_SECONDS: '600' });
    const { id, device } = await sendAssigned(apiKey, devices);
    await failOn(device, id, 'Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)');
    await assignedDevice(id, devices, device.id);
    const row = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect(row.pauseReason).toBe('limit_exceeded');
    expect(Math.abs(row.pausedUntil!.getTime() - Date.now() - 600_000)).toBeLessThan(15_000);
    const health = (await call(api.app, apiKey, 'GET', `/api/v1/devices/${device.id}`)).json().health;
    expect(health.reasons).toContain('limit_exceeded');
  });
});

describe('a device that goes offline', () => {
  it('gives back at once what it was assigned and never offered, long before the assignment lease', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'failover' });
    const id = res.json().message_ids[0] as string;
    const [gone, other] = devices as [TestDevice, TestDevice];
    await assignMessages(api.sql, { assignments: [{ id, deviceId: gone.id }], now: new Date() });
    await api.db.device.update({ where: { id: gone.id }, data: { lastSeenAt: new Date(Date.now() - 3_600_000) } });
    await startDispatcher({ ASSIGN_LEASE_SECONDS: '3600' });

    await assignedDevice(id, [other]);
    const back = await api.db.messageEvent.findFirstOrThrow({ where: { messageId: id, state: 'pending' } });
    expect([back.deviceId, back.detail]).toEqual([gone.id, 'Its device went offline before taking it; assigned again.']);
  });

  it('keeps what it was offered, and a named device’s messages', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [gone] = devices as [TestDevice, TestDevice];
    const offered = (await send(api.app, apiKey, { recipients: [phone()], body: 'failover' })).json().message_ids[0] as string;
    const named = (await send(api.app, apiKey, { recipients: [phone()], body: 'failover', device_id: gone.id })).json().message_ids[0] as string;
    await assignMessages(api.sql, {
      assignments: [
        { id: offered, deviceId: gone.id },
        { id: named, deviceId: gone.id },
      ],
      now: new Date(),
    });
    expect(await claimIds(gone)).toContain(offered);
    await api.db.message.update({ where: { id: named }, data: { offeredAt: null } });
    await api.db.device.update({ where: { id: gone.id }, data: { lastSeenAt: new Date(Date.now() - 3_600_000) } });
    await startDispatcher({ ASSIGN_LEASE_SECONDS: '3600' });
    // The sweep judged the device's health, a step after it gives back what offline devices never took.
    await vi.waitFor(async () => expect(await api.db.device.count({ where: { id: gone.id, healthStatus: { not: null } } })).toBe(1), { timeout: 10_000 });
    for (const id of [offered, named]) expect(await message(id)).toMatchObject({ state: 'assigned', deviceId: gone.id });
  });
});
