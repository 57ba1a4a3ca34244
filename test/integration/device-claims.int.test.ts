import { describe, expect, it, vi } from 'vitest';
import { applyReports, assignMessages, releaseUnclaimed } from '@smsgw/db';
import { wakeupChannel } from '@smsgw/queue';
import { DeviceClient } from '@smsgw/client';
import { createTestUser, send, uniquePhone as phone, type TestDevice } from '@smsgw/api/testing';
import {
  api,
  ISO_MS,
  startDispatcher,
  listening,
  assignedTo,
  claim,
  claimIds,
  message,
  eventStates,
  listeners,
  disjoint,
  useDeviceProtocolApi,
} from '../support/device-protocol.ts';

/**
 * Claims of the device protocol (apps/api/src/routes/device-protocols/native): the messages assigned to a device
 * are offered to it, and to it alone, until it reports about them; a long poll waits for them.
 */
useDeviceProtocolApi();

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
      id: r.id,
      to: r.to,
      message: 'hello from the test',
      created_at: r.createdAt.toISOString(),
      valid_until: expect.stringMatching(ISO_MS),
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
    expect((await Promise.all(othersIds.map(message))).map((m) => [m.state, m.offeredAt])).toEqual([
      ['assigned', null],
      ['assigned', null],
    ]);
  });

  it('offers a message only to its own device, whatever the concurrent claims of several devices', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [a, b] = devices as [TestDevice, TestDevice];
    const ofA = await assignedTo(apiKey, a, 100);
    const ofB = await assignedTo(apiKey, b, 100);

    const [claimsA, claimsB] = await Promise.all([a, b].map((d) => Promise.all(Array.from({ length: 4 }, () => claimIds(d.token, 'limit=30')))));

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
