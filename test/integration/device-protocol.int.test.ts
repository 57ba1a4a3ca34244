/**
 * The device protocol of the API (apps/api/src/routes/device) with the dispatcher that assigns the
 * messages and applies the reports: both apps in one process, so this file lives outside both.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyReports, assignMessages, deleteDevice, releaseUnclaimed } from '@smsgw/db';
import { wakeupChannel } from '@smsgw/queue';
import { DeviceClient } from '@smsgw/client';
import { createTestUser, send, startTestApi, uniquePhone as phone, type TestApi, type TestDevice } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';

let api: TestApi;
const dispatchers: Dispatcher[] = [];
const streams: AbortController[] = [];

beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.abort();
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
});
afterAll(async () => {
  await api?.close();
});

const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function startDispatcher(): Promise<void> {
  dispatchers.push(await startTestDispatcher(api));
}

let baseUrl: string | undefined;
/** The API on a real port (for the event stream and the client's fetch); the same app serves inject. */
async function listening(): Promise<string> {
  if (!baseUrl) {
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  }
  return baseUrl;
}

/**
 * `count` messages sent through the API (named to the device, so that no dispatcher would move
 * them) and assigned to it as the dispatcher does. Returns their ids.
 */
async function assignedTo(apiKey: string, device: TestDevice, count: number): Promise<string[]> {
  const res = await send(api.app, apiKey, { recipients: Array.from({ length: count }, phone), body: 'hello from the test', device_id: device.id });
  expect(res.statusCode).toBe(200);
  const ids: string[] = res.json().message_ids;
  const moved = await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: device.id })), now: new Date() });
  expect(moved).toHaveLength(count);
  // With a dispatcher running, its job for each message (a no-op now) may still hold the row, and a
  // claim skips locked rows: wait until those jobs are done.
  if (dispatchers.length > 0) {
    await vi.waitFor(
      async () => expect(await api.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).toMatchObject({ waiting: 0, active: 0, delayed: 0, prioritized: 0 }),
      { timeout: 10_000, interval: 20 },
    );
  }
  return ids;
}

function asDevice(token: string, method: 'GET' | 'POST', url: string, payload?: object) {
  return api.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
}

function claim(token: string, query = '') {
  return asDevice(token, 'GET', `/api/v1/device/messages${query ? `?${query}` : ''}`);
}

async function claimIds(token: string, query = ''): Promise<string[]> {
  const res = await claim(token, query);
  expect(res.statusCode).toBe(200);
  return (res.json().messages as { id: string }[]).map((m) => m.id);
}

function report(token: string, reports: object[]) {
  return asDevice(token, 'POST', '/api/v1/device/reports', { reports });
}

function message(id: string) {
  return api.db.message.findUniqueOrThrow({ where: { id } });
}

/** The message's history in the order it was written (`at` is the device's clock for reports). */
async function eventStates(id: string): Promise<string[]> {
  const events = await api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });
  return events.map((e) => e.state);
}

/** Resolves once every report job taken so far was handled (handled jobs are removed). */
async function reportsHandled(): Promise<void> {
  await vi.waitFor(
    async () => {
      const counts = await api.app.reportsQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed');
      expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, prioritized: 0, paused: 0, failed: 0 });
    },
    { timeout: 15_000, interval: 50 },
  );
}

/** The number of devices that have a stream or long poll open on this API process. */
const listeners = () => api.app.wakeups.connectedDevices;

function disjoint(lists: string[][]): boolean {
  const all = lists.flat();
  return new Set(all).size === all.length;
}

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

describe('GET /api/v1/device/messages (claim: offers until the device reports)', () => {
  it('offers assigned messages without moving them: exactly {messages: [{id, to, message, created_at, valid_until, sim_number}]}', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const ids = await assignedTo(apiKey, device, 3);
    const rows = await Promise.all(ids.map(message));
    const before = Date.now();

    const res = await claim(device.token);

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['messages']);
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    const expected = rows.map((r) => ({
      id: r.id, to: r.to, message: 'hello from the test', created_at: r.createdAt.toISOString(), valid_until: expect.stringMatching(ISO_MS),
      sim_number: null,
    }));
    expect([...body.messages].sort(byId)).toEqual(expected.sort(byId));
    for (const m of body.messages) {
      expect(m.created_at).toMatch(ISO_MS);
      // The sending lease (an hour by default) from this first offer.
      const validFor = Date.parse(m.valid_until) - before;
      expect(validFor).toBeGreaterThan(3600_000 - 5_000);
      expect(validFor).toBeLessThan(3600_000 + 5_000);
    }

    const after = await Promise.all(ids.map(message));
    expect(after.map((m) => [m.state, m.deviceId, m.offeredAt !== null, m.sendingAt])).toEqual(ids.map(() => ['assigned', device.id, true, null]));
    for (const id of ids) expect(await eventStates(id)).toEqual(['assigned']);
  });

  it('returns the same messages again on every claim until the device reports about them, with the same valid_until', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const ids = await assignedTo(apiKey, device, 2);

    const first = (await claim(device.token)).json().messages;
    const second = (await claim(device.token)).json().messages;
    expect(second).toEqual(first);
    expect(first.map((m: { id: string }) => m.id).sort()).toEqual([...ids].sort());

    const now = new Date();
    await applyReports(api.sql, { status: 'sending', reports: [{ id: ids[0]!, deviceId: device.id, at: now, error: null }], now });
    expect(await claimIds(device.token)).toEqual([ids[1]]);
  });

  it('offers at most 50 by default and at most `limit`, messages never offered before first', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const ids = await assignedTo(apiKey, device, 60);

    const first = await claimIds(device.token);
    const second = await claimIds(device.token, 'limit=7');
    const third = await claimIds(device.token, 'limit=5');

    expect([first.length, second.length, third.length]).toEqual([50, 7, 5]);
    expect(disjoint([first, second])).toBe(true);
    // Three never offered, then the oldest of those offered already.
    const fresh = ids.filter((id) => !first.includes(id) && !second.includes(id));
    expect(third.slice(0, 3).sort()).toEqual(fresh.sort());
    expect(third.slice(3).every((id) => first.includes(id) || second.includes(id))).toBe(true);
  });

  it.each([
    ['limit=501', 'limit'],
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['wait=61', 'wait'],
    ['wait=-1', 'wait'],
  ])('refuses %s with 400 invalid_request naming the field, and offers nothing', async (query, field) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const [id] = await assignedTo(apiKey, device, 1);

    const res = await claim(device.token, query);

    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(field) });
    expect(await message(id!)).toMatchObject({ state: 'assigned', offeredAt: null });
  });

  it('accepts limit=500', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const ids = await assignedTo(apiKey, devices[0]!, 2);
    expect((await claimIds(devices[0]!.token, 'limit=500')).sort()).toEqual([...ids].sort());
  });

  it('returns only messages assigned to this device: not pending ones, not those of another device', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [mine, other] = devices as [TestDevice, TestDevice];
    const pending = await send(api.app, apiKey, { recipients: [phone()], body: 'not yet assigned', device_id: mine.id });
    expect(pending.statusCode).toBe(200);
    const othersIds = await assignedTo(apiKey, other, 2);
    const myIds = await assignedTo(apiKey, mine, 1);

    expect(await claimIds(mine.token)).toEqual(myIds);
    expect((await message(pending.json().message_ids[0])).state).toBe('pending');
    expect((await Promise.all(othersIds.map(message))).map((m) => [m.state, m.offeredAt])).toEqual([['assigned', null], ['assigned', null]]);
  });

  it('offers a message only to its own device, whatever the concurrent claims of several devices', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [a, b] = devices as [TestDevice, TestDevice];
    const ofA = await assignedTo(apiKey, a, 100);
    const ofB = await assignedTo(apiKey, b, 100);

    const [claimsA, claimsB] = await Promise.all(
      [a, b].map((d) => Promise.all(Array.from({ length: 4 }, () => claimIds(d.token, 'limit=30')))),
    );

    expect(claimsA!.flat().every((id) => ofA.includes(id))).toBe(true);
    expect(claimsB!.flat().every((id) => ofB.includes(id))).toBe(true);
    // Concurrent claims of one device may return the same message (the device deduplicates by id).
    expect(new Set(claimsA!.flat()).size).toBeGreaterThanOrEqual(30);
  });

  it('hands a message either to the device it was offered to or, after its lease moved it unoffered, to the next one, never both', async () => {
    const { userId, apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [a, b] = devices as [TestDevice, TestDevice];
    const ids = await assignedTo(apiKey, a, 100);
    // Round-robin messages, so that the lease may move them (the test named them to pass the send).
    await api.db.message.updateMany({ where: { userId, id: { in: ids } }, data: { requestedDeviceId: null } });

    // Device a claims while the lease expires and the messages are assigned to b, as the sweep and dispatcher do.
    const moveToB = async () => {
      const released = await releaseUnclaimed(api.sql, { assignedBefore: new Date(Date.now() + 60_000), maxAssignments: 3, limit: 1000, now: new Date() });
      await assignMessages(api.sql, { assignments: released.map((id) => ({ id, deviceId: b.id })), now: new Date() });
    };
    const [byA] = await Promise.all([claimIds(a.token, 'limit=100'), moveToB()]);
    // The rest of the lease runs, as if a was slow: what a was offered stays with a.
    await moveToB();
    const byB = await claimIds(b.token, 'limit=100');

    expect(disjoint([byA, byB])).toBe(true);
    expect([...byA, ...byB].sort()).toEqual([...ids].sort());
    const rows = await api.db.message.findMany({ where: { id: { in: ids } } });
    for (const row of rows) expect([row.state, row.deviceId]).toEqual(['assigned', byA.includes(row.id) ? a.id : b.id]);
  });
});

describe('long-poll', () => {
  it('waits with nothing assigned and returns as soon as a message is assigned', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const before = listeners();

    const started = Date.now();
    let settled = false;
    const polling = claim(device.token, 'wait=10').finally(() => (settled = true));
    // The claim is listening for wake-ups (and found nothing, or it would have answered).
    await vi.waitFor(() => expect(listeners()).toBe(before + 1), { timeout: 5_000, interval: 10 });
    expect(settled).toBe(false);

    const sent = await send(api.app, apiKey, { recipients: [phone()], body: 'wake up' });
    expect(sent.statusCode).toBe(200);
    const res = await polling;
    const elapsed = Date.now() - started;

    expect(res.statusCode).toBe(200);
    expect(res.json().messages.map((m: { id: string }) => m.id)).toEqual(sent.json().message_ids);
    // Well before the 10 s wait: the wake-up, not the deadline, ended it.
    expect(elapsed).toBeLessThan(5_000);
    expect(await message(sent.json().message_ids[0])).toMatchObject({ state: 'assigned', offeredAt: expect.any(Date) });
  });

  it('answers at once when a message is already assigned, whatever the wait', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const ids = await assignedTo(apiKey, devices[0]!, 1);
    const started = Date.now();
    expect(await claimIds(devices[0]!.token, 'wait=10')).toEqual(ids);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('returns an empty list after about `wait` seconds when nothing is assigned (wait=1)', async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const started = Date.now();
    const res = await claim(devices[0]!.token, 'wait=1');
    const elapsed = Date.now() - started;

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { messages: [] } });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('stops waiting for a client that left: a message assigned afterwards is offered on the next claim', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const client = new DeviceClient(await listening(), device.token);
    const before = listeners();

    const leave = new AbortController();
    const polling = client.claim({ wait: 30, signal: leave.signal }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(listeners()).toBe(before + 1), { timeout: 5_000, interval: 10 });
    leave.abort();
    expect(await polling).toBeInstanceOf(Error);
    // The server noticed and stopped waiting long before the 30 s.
    await vi.waitFor(() => expect(listeners()).toBe(before), { timeout: 5_000, interval: 10 });

    const ids = await assignedTo(apiKey, device, 1);
    await api.app.redis.publish(wakeupChannel(api.config.QUEUE_PREFIX), device.id);

    expect((await message(ids[0]!)).state).toBe('assigned');
    expect(await claimIds(device.token)).toEqual(ids);
  });
});

describe('POST /api/v1/device/reports', () => {
  /** A message of the device, offered to it by a claim (still `assigned`). */
  async function claimedBy(apiKey: string, device: TestDevice): Promise<string> {
    const [id] = await assignedTo(apiKey, device, 1);
    expect(await claimIds(device.token)).toContain(id);
    return id!;
  }

  it('applies sent then delivered: sent_at and delivered_at from the reports, one event each', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    const sentAt = new Date().toISOString();

    const sent = await report(device.token, [{ id, status: 'sent', at: sentAt }]);
    expect({ status: sent.statusCode, body: sent.json() }).toEqual({ status: 202, body: { accepted: 1, rejected: [] } });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    expect((await message(id)).sentAt?.toISOString()).toBe(sentAt);

    const deliveredAt = new Date().toISOString();
    const delivered = await report(device.token, [{ id, status: 'delivered', at: deliveredAt }]);
    expect(delivered.statusCode).toBe(202);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });

    const row = await message(id);
    expect({ sentAt: row.sentAt?.toISOString(), deliveredAt: row.deliveredAt?.toISOString(), error: row.error }).toEqual({
      sentAt, deliveredAt, error: null,
    });
    expect(await eventStates(id)).toEqual(['assigned', 'sent', 'delivered']);
    // The user sees it through the API as well.
    const record = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { 'x-api-key': apiKey } });
    expect(record.json()).toMatchObject({ status: 'delivered', state: 'delivered', sent_at: sentAt, delivered_at: deliveredAt });
  });

  it('applies sent and delivered of one message given in one batch', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);

    // Listed in the "wrong" order: they are applied in lifecycle order.
    const res = await report(device.token, [{ id, status: 'delivered' }, { id, status: 'sent' }]);
    expect(res.json()).toEqual({ accepted: 2, rejected: [] });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });
    expect(await eventStates(id)).toEqual(['assigned', 'sent', 'delivered']);
    expect((await message(id)).sentAt).not.toBeNull();
  });

  it('changes nothing on a duplicate or backward report after delivered (state, times, updated_at, events)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    await report(device.token, [{ id, status: 'sent' }, { id, status: 'delivered' }]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });
    const before = await message(id);
    const eventsBefore = await eventStates(id);

    const late = await report(device.token, [
      { id, status: 'sent', at: new Date().toISOString() },
      { id, status: 'delivered', at: new Date().toISOString() },
      { id, status: 'failed', error: 'late failure' },
    ]);
    // Accepted (reports are idempotent), then handled by the dispatcher without effect.
    expect(late.json()).toEqual({ accepted: 3, rejected: [] });
    await reportsHandled();

    expect(await message(id)).toEqual(before);
    expect(await eventStates(id)).toEqual(eventsBefore);
  });

  it('changes nothing on a second `sent`', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    await report(device.token, [{ id, status: 'sent', at: '2026-11-21T10:30:00.000Z' }]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    const before = await message(id);

    await report(device.token, [{ id, status: 'sent', at: '2026-11-21T11:00:00.000Z' }]);
    await reportsHandled();

    expect(await message(id)).toEqual(before);
    expect(await eventStates(id)).toEqual(['assigned', 'sent']);
  });

  it("lists another device's message and malformed or unknown ids in `rejected`, and accepts the rest of the batch", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [mine, other] = devices as [TestDevice, TestDevice];
    const stranger = await createTestUser(api.db, { devices: 1 });
    await startDispatcher();
    const own = await claimedBy(apiKey, mine);
    const othersMessage = await claimedBy(apiKey, other);
    const strangersMessage = await claimedBy(stranger.apiKey, stranger.devices[0]!);
    const unknown = randomUUID();

    const res = await report(mine.token, [
      { id: othersMessage, status: 'sent' },
      { id: own, status: 'sent' },
      { id: 'not-a-uuid', status: 'sent' },
      { id: strangersMessage, status: 'delivered' },
      { id: unknown, status: 'failed' },
    ]);

    expect(res.statusCode).toBe(202);
    const rejection = (rid: string) => ({ id: rid, error: 'not_found', message: 'No message of this device has this id.' });
    expect(res.json()).toEqual({
      accepted: 1,
      rejected: [rejection(othersMessage), rejection('not-a-uuid'), rejection(strangersMessage), rejection(unknown)],
    });
    await vi.waitFor(async () => expect((await message(own)).state).toBe('sent'), { timeout: 15_000 });
    await reportsHandled();
    expect((await message(othersMessage)).state).toBe('assigned');
    expect((await message(strangersMessage)).state).toBe('assigned');
  });

  it("keeps a report's time between the first offer and its arrival, whatever the phone's clock says", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const early = await claimedBy(apiKey, device);
    const late = await claimedBy(apiKey, device);
    const before = Date.now();
    await report(device.token, [
      { id: early, status: 'sent', at: '2000-01-01T00:00:00.000Z' },
      { id: late, status: 'sent', at: '2099-01-01T00:00:00.000Z' },
    ]);
    await vi.waitFor(async () => expect((await message(late)).state).toBe('sent'), { timeout: 15_000 });
    await vi.waitFor(async () => expect((await message(early)).state).toBe('sent'), { timeout: 15_000 });
    const earlyRow = await api.db.message.findUniqueOrThrow({ where: { id: early } });
    expect(earlyRow.sentAt?.getTime()).toBe(earlyRow.offeredAt?.getTime());
    const lateSentAt = (await message(late)).sentAt!.getTime();
    expect(lateSentAt).toBeGreaterThanOrEqual(before);
    expect(lateSentAt).toBeLessThanOrEqual(Date.now());
  });

  it('refuses to fail a message the device was assigned but never offered', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const res = await send(api.app, apiKey, { recipients: ['+15557770001'], body: 'not claimed yet' });
    const id = res.json().message_ids[0] as string;
    await vi.waitFor(async () => expect((await message(id)).state).toBe('assigned'), { timeout: 15_000 });
    const now = new Date();
    expect((await applyReports(api.sql, { status: 'failed', reports: [{ id, deviceId: device.id, at: now, error: 'made up' }], now })).moved).toEqual([]);
    expect((await message(id)).state).toBe('assigned');
  });

  it('takes `sending` as the acknowledgement: the message leaves the offers and a later `sent` applies', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);

    expect((await report(device.token, [{ id, status: 'sending' }])).json()).toEqual({ accepted: 1, rejected: [] });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sending'), { timeout: 15_000 });
    expect(await claimIds(device.token)).toEqual([]);
    // A repeated acknowledgement changes nothing; the result applies.
    await report(device.token, [{ id, status: 'sending' }, { id, status: 'sent' }]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    expect(await eventStates(id)).toEqual(['assigned', 'sending', 'sent']);
  });

  it("fails the message with the device's error, or a default sentence without one", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const withError = await claimedBy(apiKey, device);
    const withoutError = await claimedBy(apiKey, device);
    const at = new Date().toISOString();

    await report(device.token, [
      { id: withError, status: 'failed', error: 'SIM card has no credit', at },
      { id: withoutError, status: 'failed' },
    ]);
    await vi.waitFor(async () => expect((await message(withoutError)).state).toBe('failed'), { timeout: 15_000 });

    const failed = await message(withError);
    expect([failed.state, failed.error, failed.failedAt?.toISOString()]).toEqual(['failed', 'SIM card has no credit', at]);
    expect((await message(withoutError)).error).toBe('The device reported that sending failed.');
    const events = await api.db.messageEvent.findMany({ where: { messageId: withError, state: 'failed' } });
    expect(events.map((e) => [e.detail, e.deviceId])).toEqual([['SIM card has no credit', device.id]]);
  });

  it.each([
    ['an empty list', { reports: [] }],
    ['an unknown status', { reports: [{ id: randomUUID(), status: 'read' }] }],
    ['an unknown field', { reports: [{ id: randomUUID(), status: 'sent', extra: 1 }] }],
    ['a bad `at`', { reports: [{ id: randomUUID(), status: 'sent', at: 'yesterday' }] }],
    ['501 reports', { reports: Array.from({ length: 501 }, () => ({ id: randomUUID(), status: 'sent' })) }],
  ])('refuses %s with 400 invalid_request', async (_, payload) => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const res = await asDevice(devices[0]!.token, 'POST', '/api/v1/device/reports', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });
});

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
    const stop = new AbortController();
    streams.push(stop);

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
    const stop = new AbortController();
    streams.push(stop);

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
    const stop = new AbortController();
    streams.push(stop);
    await expect(client.events(() => undefined, stop.signal)).rejects.toThrow('HTTP 401');
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
      method, url, headers: { authorization: `Bearer ${device.token}`, ...(payload && { 'content-type': 'application/json' }) }, ...(payload && { payload }),
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
