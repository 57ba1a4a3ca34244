import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyReports } from '@smsgw/db';
import { createSubscriberConnection, wakeupChannel } from '@smsgw/queue';
import { createTestUser, startTestApi, type TestApi } from '@smsgw/api/testing';
import { sweepSteps } from '../testing/sweep-steps.ts';
import { startTestDispatcher } from '../testing/test-dispatcher.ts';

/** The sweep's leases: assignment, offer, sending, and waking a device again (expiry, outbox, retention: sweep-outbox.int.test.ts). */
let api: TestApi;
/** What a test started (dispatchers, simulators), closed after it in reverse order. */
const started: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});
afterAll(async () => {
  await api?.close();
});
const { dispatcherConfig, sweepAt, sendOne, assign, message, events, offer, acknowledge, jobData } = sweepSteps(() => api);

describe('the assignment lease (ASSIGN_LEASE_SECONDS)', () => {
  it('puts an assigned message not claimed in time back to pending and enqueues its dispatch job again', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(59);
    expect((await message(id)).state).toBe('assigned');
    expect(await jobData(id)).toBeUndefined();

    const result = await sweepAt(61);

    expect(result.reassigned).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.assignments, row.error]).toEqual(['pending', 1, null]);
    expect(await jobData(id)).toEqual({ messageId: id });
    expect((await events(id)).at(-1)).toEqual({ state: 'pending', detail: 'Not taken by the device in time; assigned again.' });
  });

  it('moves it to the other device each time (dispatcher running), then fails it after MAX_ASSIGNMENTS with an error saying so', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    started.push(await startTestDispatcher(api));
    const id = await sendOne(apiKey);

    const assignedTo = async (assignments: number) => {
      await vi.waitFor(async () => expect(await message(id)).toMatchObject({ state: 'assigned', assignments }), { timeout: 15_000 });
      return (await message(id)).deviceId!;
    };
    const first = await assignedTo(1);
    await sweepAt(61);
    const second = await assignedTo(2);
    await sweepAt(61);
    const third = await assignedTo(3);

    expect(new Set([first, second])).toEqual(new Set(devices.map((d) => d.id)));
    expect(third).toBe(first);

    const result = await sweepAt(61);

    expect(result.unclaimedFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.assignments, row.failedAt !== null]).toEqual(['failed', 3, true]);
    expect(row.error).toBe('No device claimed the message after 3 assignments of 60 seconds.');
    expect(await jobData(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'pending', 'assigned', 'pending', 'assigned', 'failed']);
  });

  it('moves it to another device even when the round-robin cursor points back at the device it left', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 2 });
    started.push(await startTestDispatcher(api));
    const waitAssigned = (id: string) =>
      vi.waitFor(async () => expect((await message(id)).state).toBe('assigned'), { timeout: 15_000 }).then(() => message(id));

    // Slot 0 goes to one device, slot 1 to the other, which claims its message at once.
    const left = await waitAssigned(await sendOne(apiKey));
    const other = await waitAssigned(await sendOne(apiKey));
    expect(other.deviceId).not.toBe(left.deviceId);
    const claimed = await offer(other.deviceId!);
    expect(claimed).toEqual([other.id]);

    // Only the message never offered is released; the next slot (2) is the device it was on.
    await sweepAt(61);

    await vi.waitFor(async () => expect(await message(left.id)).toMatchObject({ state: 'assigned', assignments: 2 }), { timeout: 15_000 });
    expect((await message(left.id)).deviceId).toBe(other.deviceId);
  });

  it('leaves the queue of a device that is taking messages alone, however long it waits, and moves it once the device stops', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const busy = devices[0]!;
    const waiting = await sendOne(apiKey, { dropJob: true });
    await assign(waiting, busy.id);
    // The device took other messages 30 s into the lease (a phone working through a long queue).
    await api.db.device.update({ where: { id: busy.id }, data: { offeredAt: new Date(Date.now() + 30_000) } });

    await sweepAt(61);
    expect(await message(waiting)).toMatchObject({ state: 'assigned', deviceId: busy.id, offeredAt: null });

    // 60 s after it last took anything, its waiting messages go back to round-robin.
    await sweepAt(91);
    expect(await message(waiting)).toMatchObject({ state: 'pending', assignments: 1 });
    expect(await jobData(waiting)).toEqual({ messageId: waiting });
  });

  it('records on the device that it takes messages when it is offered some', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    expect(await offer(device.id)).toEqual([]);
    expect((await api.db.device.findUniqueOrThrow({ where: { id: device.id } })).offeredAt).toBeNull();
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    const before = Date.now();

    expect(await offer(device.id)).toEqual([id]);

    const { offeredAt } = await api.db.device.findUniqueOrThrow({ where: { id: device.id } });
    expect(offeredAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('follows the configured lease and limit (ASSIGN_LEASE_SECONDS=5, MAX_ASSIGNMENTS=1)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const config = dispatcherConfig({ ASSIGN_LEASE_SECONDS: '5', MAX_ASSIGNMENTS: '1' });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);

    await sweepAt(4, config);
    expect((await message(id)).state).toBe('assigned');
    await sweepAt(6, config);

    const row = await message(id);
    expect([row.state, row.error]).toEqual(['failed', 'No device claimed the message after 1 assignments of 5 seconds.']);
    expect(await jobData(id)).toBeUndefined();
  });

  it('never moves a message for a named device: it stays assigned to it, however many leases pass', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const named = devices[1]!;
    const id = await sendOne(apiKey, { deviceId: named.id, dropJob: true });
    await assign(id, named.id);

    for (const seconds of [61, 3600, 6 * 3600]) await sweepAt(seconds);

    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments, row.error]).toEqual(['assigned', named.id, 1, null]);
    expect(await jobData(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned']);
  });
});

describe('an offered message stays with its device', () => {
  it('is never handed back to round-robin by the assignment lease, however many leases pass', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, devices[0]!.id);
    expect(await offer(devices[0]!.id)).toEqual([id]);

    for (const seconds of [61, 600, 3000]) await sweepAt(seconds);

    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments, row.error]).toEqual(['assigned', devices[0]!.id, 1, null]);
    expect(await jobData(id)).toBeUndefined();
    // It is offered to that device again.
    expect(await offer(devices[0]!.id)).toEqual([id]);
    expect(await offer(devices[1]!.id)).toEqual([]);
  });
});

describe('the sending lease (SENDING_LEASE_SECONDS from the first offer, plus DEVICE_CLOCK_SKEW_SECONDS)', () => {
  it('fails an acknowledged message with no result in time ("did not report") and never enqueues it again', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);
    await acknowledge(device.id, id);

    await sweepAt(3600 + 299);
    expect((await message(id)).state).toBe('sending');

    const result = await sweepAt(3600 + 301);

    expect(result.sendingFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.deviceId, row.sentAt]).toEqual(['failed', device.id, null]);
    expect(row.error).toContain('did not report a result');
    expect(row.error).toContain('not sent again');
    expect(await jobData(id)).toBeUndefined();
    // Later sweeps (leases, outbox) leave it as it is.
    await sweepAt(6 * 3600);
    expect(await jobData(id)).toBeUndefined();
    expect(await message(id)).toEqual(row);
  });

  it('fails an offered message never acknowledged ("did not acknowledge") at the same moment, and gives it to no other device', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    await sweepAt(3600 + 299);
    expect((await message(id)).state).toBe('assigned');
    const result = await sweepAt(3600 + 301);

    expect(result.unacknowledgedFailed).toBeGreaterThanOrEqual(1);
    const row = await message(id);
    expect([row.state, row.deviceId, row.assignments]).toEqual(['failed', device.id, 1]);
    expect(row.error).toContain('did not acknowledge');
    expect((await events(id)).map((e) => e.state)).toEqual(['assigned', 'failed']);
  });

  it('counts from the time to live when that comes first (validUntil = the earlier of the two)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const config = dispatcherConfig({ MESSAGE_TTL_SECONDS: '600', DEVICE_CLOCK_SKEW_SECONDS: '60' });
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    await sweepAt(600 + 59, config);
    expect((await message(id)).state).toBe('assigned');
    await sweepAt(600 + 61, config);
    expect((await message(id)).state).toBe('failed');
  });

  it('leaves a message the device reported sent alone', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);
    const now = new Date();
    await applyReports(api.sql, { status: 'sent', reports: [{ id, deviceId: device.id, at: now, error: null }], now });

    await sweepAt(3 * 86_400);

    expect((await message(id)).state).toBe('sent');
  });
});

describe('waking a device again', () => {
  it('wakes a device whose offers wait unacknowledged for more than 30 s, at most once a minute', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const id = await sendOne(apiKey, { dropJob: true });
    await assign(id, device.id);
    expect(await offer(device.id)).toEqual([id]);

    const subscriber = createSubscriberConnection(api.app.redis);
    const woken: string[] = [];
    subscriber.on('message', (_channel: string, deviceId: string) => woken.push(deviceId));
    await subscriber.subscribe(wakeupChannel(api.config.QUEUE_PREFIX));
    try {
      await sweepAt(20);
      const first = await sweepAt(31);
      const second = await sweepAt(40);
      expect(first.devicesWokenAgain).toBeGreaterThanOrEqual(1);
      await vi.waitFor(() => expect(woken.filter((d) => d === device.id)).toHaveLength(1));
      expect(second.devicesWokenAgain).toBe(0);
    } finally {
      subscriber.disconnect();
    }
  });
});
