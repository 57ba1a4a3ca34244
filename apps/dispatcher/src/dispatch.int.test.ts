import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { assignMessages, createDevice, deleteDevice, offerMessages } from '@smsgw/db';
import { enqueueDispatch, roundRobinKey } from '@smsgw/queue';
import { createTestUser, send, uniquePhone as phone, type TestApi } from '@smsgw/api/testing';
import type { Dispatcher } from './dispatcher.ts';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';
import { applyDeviceReports } from './handlers/apply-reports.ts';

const harness = useDispatcherTestApi();
let api: TestApi;
beforeAll(() => {
  api = harness.api;
});
const startDispatcher = (env: Record<string, string> = {}): Promise<Dispatcher> => harness.start(env);

/**
 * A user with an API key and `n` available devices (each has just made a request), each with its
 * token, in the round-robin order (by id).
 */
async function userWithDevices(n: number) {
  const { user, apiKey } = await createTestUser(api.db, { devices: 0 });
  const devices: { id: string; token: string }[] = [];
  for (let i = 0; i < n; i++) {
    const { device, token } = await createDevice(api.db, { userId: user.id, name: `phone-${i}` });
    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: new Date() } });
    devices.push({ id: device.id, token });
  }
  devices.sort((a, b) => (a.id < b.id ? -1 : 1));
  return { userId: user.id, apiKey, devices };
}

/** Sends `count` single-recipient messages, `parallel` requests at a time; returns the message ids. */
async function sendSingles(apiKey: string, count: number, parallel = 25): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += parallel) {
    const responses = await Promise.all(
      Array.from({ length: Math.min(parallel, count - done) }, () => send(api.app, apiKey, { recipients: [phone()], body: 'round robin' })),
    );
    for (const res of responses) {
      expect(res.statusCode).toBe(200);
      ids.push(...(res.json().message_ids as string[]));
    }
  }
  return ids;
}

async function stateCounts(userId: string): Promise<Record<string, number>> {
  const rows = await api.db.message.groupBy({ by: ['state'], where: { userId }, _count: { _all: true } });
  return Object.fromEntries(rows.map((r) => [r.state, r._count._all]));
}

/** Messages of the user per device id (null: no device). */
async function perDevice(userId: string): Promise<Record<string, number>> {
  const rows = await api.db.message.groupBy({ by: ['deviceId'], where: { userId }, _count: { _all: true } });
  return Object.fromEntries(rows.map((r) => [String(r.deviceId), r._count._all]));
}

async function waitUntilAssigned(userId: string, count: number): Promise<void> {
  await vi.waitFor(async () => expect(await stateCounts(userId)).toEqual({ assigned: count }), { timeout: 30_000, interval: 100 });
}

function claim(token: string, query = 'limit=500') {
  return api.app.inject({ method: 'GET', url: `/api/v1/device/messages?${query}`, headers: { authorization: `Bearer ${token}` } });
}

describe('round-robin', () => {
  it('gives exactly 100 messages to each of 3 devices for 300 sends', { timeout: 90_000 }, async () => {
    const { userId, apiKey, devices } = await userWithDevices(3);
    await startDispatcher();

    await sendSingles(apiKey, 300);
    await waitUntilAssigned(userId, 300);

    expect(await perDevice(userId)).toEqual(Object.fromEntries(devices.map((d) => [d.id, 100])));
    const ids = (await api.db.message.findMany({ where: { userId }, select: { id: true } })).map((m) => m.id);
    const events = await api.db.messageEvent.count({ where: { messageId: { in: ids }, state: 'assigned' } });
    expect(events).toBe(300);
  });

  it('gives exactly 100 to each of 3 devices with 2 dispatchers taking the jobs at once', { timeout: 90_000 }, async () => {
    const { userId, apiKey, devices } = await userWithDevices(3);
    await sendSingles(apiKey, 300);
    // Both start on a full queue; small batches and little concurrency make them take turns.
    const env = { DISPATCH_CONCURRENCY: '8', DISPATCH_BATCH_SIZE: '4' };
    await Promise.all([startDispatcher(env), startDispatcher(env)]);
    await waitUntilAssigned(userId, 300);

    expect(await perDevice(userId)).toEqual(Object.fromEntries(devices.map((d) => [d.id, 100])));
    // Every slot came from the one cursor in Redis, whichever dispatcher took the message.
    expect(await api.app.redis.get(roundRobinKey(api.config.QUEUE_PREFIX, userId))).toBe('300');
  });

  it('continues the cursor where another dispatcher process left it (the cursor lives in Redis)', { timeout: 90_000 }, async () => {
    const { userId, apiKey, devices } = await userWithDevices(3);
    const first = await startDispatcher();
    await sendSingles(apiKey, 1);
    await waitUntilAssigned(userId, 1);
    await first.close(); // closing again after the test changes nothing

    // A new process: with a cursor of its own it would start again at the first device, giving it 101.
    await startDispatcher();
    await sendSingles(apiKey, 299);
    await waitUntilAssigned(userId, 300);

    expect(await perDevice(userId)).toEqual(Object.fromEntries(devices.map((d) => [d.id, 100])));
  });

  it('keeps a separate cursor per user: two users interleaved each get an even split', { timeout: 60_000 }, async () => {
    const a = await userWithDevices(2);
    const b = await userWithDevices(3);
    await startDispatcher();

    await Promise.all([sendSingles(a.apiKey, 40), sendSingles(b.apiKey, 60)]);
    await waitUntilAssigned(a.userId, 40);
    await waitUntilAssigned(b.userId, 60);

    expect(await perDevice(a.userId)).toEqual(Object.fromEntries(a.devices.map((d) => [d.id, 20])));
    expect(await perDevice(b.userId)).toEqual(Object.fromEntries(b.devices.map((d) => [d.id, 20])));
  });

  it('leaves out a disabled device', async () => {
    const { userId, apiKey, devices } = await userWithDevices(3);
    const [on1, off, on2] = devices as [(typeof devices)[0], (typeof devices)[0], (typeof devices)[0]];
    await api.db.device.update({ where: { id: off.id }, data: { enabled: false } });
    await startDispatcher();

    await sendSingles(apiKey, 20);
    await waitUntilAssigned(userId, 20);

    expect(await perDevice(userId)).toEqual({ [on1.id]: 10, [on2.id]: 10 });
  });
});

describe('a named device', () => {
  it('gets all of its messages although the user has 3 devices, and round-robin messages are not counted against it', async () => {
    const { userId, apiKey, devices } = await userWithDevices(3);
    const named = devices[1]!;
    await startDispatcher();

    const res = await send(api.app, apiKey, { recipients: Array.from({ length: 30 }, phone), body: 'pinned', device_id: named.id });
    expect(res.statusCode).toBe(200);
    const namedIds: string[] = res.json().message_ids;
    await sendSingles(apiKey, 30);
    await waitUntilAssigned(userId, 60);

    const pinned = await api.db.message.findMany({ where: { id: { in: namedIds } } });
    expect(pinned.map((m) => [m.deviceId, m.requestedDeviceId, m.state])).toEqual(namedIds.map(() => [named.id, named.id, 'assigned']));
    // The 30 round-robin messages still split evenly: 10 each, so the named device has 40 in all.
    expect(await perDevice(userId)).toEqual({ [devices[0]!.id]: 10, [named.id]: 40, [devices[2]!.id]: 10 });

    // Over the device protocol, the named device claims its 30 (and its 10), the others none of them.
    const claimed = new Map<string, string[]>();
    for (const device of devices) {
      const reply = await claim(device.token);
      expect(reply.statusCode).toBe(200);
      claimed.set(
        device.id,
        (reply.json().messages as { id: string }[]).map((m) => m.id),
      );
    }
    expect(claimed.get(named.id)).toEqual(expect.arrayContaining(namedIds));
    for (const other of [devices[0]!, devices[2]!]) expect(claimed.get(other.id)!.filter((id) => namedIds.includes(id))).toEqual([]);
  });

  it('fails the message when the named device was deleted before dispatch', async () => {
    const { userId, apiKey, devices } = await userWithDevices(2);
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'pinned', device_id: devices[0]!.id });
    const [id] = res.json().message_ids as string[];
    await deleteDevice(api.db, { userId, id: devices[0]!.id });

    await startDispatcher();

    await vi.waitFor(async () => expect((await api.db.message.findUniqueOrThrow({ where: { id } })).state).toBe('failed'), { timeout: 15_000 });
    const message = await api.db.message.findUniqueOrThrow({ where: { id } });
    expect(message.error).toBe('The device named for this message was deleted.');
    // Never moved to the user's other device.
    expect(message.deviceId).toBeNull();
  });
});

describe('without an available device', () => {
  it('keeps the messages pending (not failed), retries later, and assigns them once a device is back', async () => {
    const { userId, apiKey, devices } = await userWithDevices(1);
    const device = devices[0]!;
    const ids = await sendSingles(apiKey, 2);
    // The only device falls silent after the send was accepted.
    await api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: new Date(Date.now() - 3600_000) } });

    await startDispatcher();

    // The dispatcher has looked at both jobs and put them off for later.
    await vi.waitFor(async () => expect(await Promise.all(ids.map(async (id) => (await api.queue.getJob(id))?.getState()))).toEqual(['delayed', 'delayed']), {
      timeout: 15_000,
    });
    const waiting = await api.db.message.findMany({ where: { userId } });
    expect(waiting.map((m) => [m.state, m.deviceId, m.error, m.failedAt])).toEqual([
      ['pending', null, null, null],
      ['pending', null, null, null],
    ]);

    // The device comes back; the retry (brought forward rather than waited for) assigns the messages.
    const heartbeat = await api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', headers: { authorization: `Bearer ${device.token}` } });
    expect(heartbeat.statusCode).toBe(200);
    for (const id of ids) await (await api.queue.getJob(id))!.promote();

    await waitUntilAssigned(userId, 2);
    expect(await perDevice(userId)).toEqual({ [device.id]: 2 });
  });
});

describe('dispatch is idempotent', () => {
  it('does nothing for a dispatch job of a message that is already assigned', async () => {
    const { userId, apiKey } = await userWithDevices(3);
    await startDispatcher();
    const [id] = await sendSingles(apiKey, 1);
    await waitUntilAssigned(userId, 1);
    const before = await api.db.message.findUniqueOrThrow({ where: { id } });

    await enqueueDispatch(api.queue, [id!]);
    // The job is removed once handled.
    await vi.waitFor(async () => expect(await api.queue.getJob(id!)).toBeUndefined(), { timeout: 15_000 });

    const after = await api.db.message.findUniqueOrThrow({ where: { id } });
    expect(after).toEqual(before);
    expect(after.assignments).toBe(1);
    expect(await api.db.messageEvent.count({ where: { messageId: id, state: 'assigned' } })).toBe(1);
  });
});

describe('reports of several devices applied together', () => {
  it('moves each device’s own messages only, whatever else the batch holds', async () => {
    const { apiKey, devices } = await userWithDevices(2);
    const [a, b] = [devices[0]!, devices[1]!];
    const [ofA, ofB] = await sendSingles(apiKey, 2);
    const now = new Date();
    await assignMessages(api.sql, {
      assignments: [
        { id: ofA!, deviceId: a.id },
        { id: ofB!, deviceId: b.id },
      ],
      now,
    });
    for (const device of [a, b]) await offerMessages(api.sql, { deviceId: device.id, limit: 10, order: 'oldest', now });
    const at = now.toISOString();

    const result = await applyDeviceReports(api.sql, [
      // Device a reports b's message failed: it is not a's, so it moves nothing.
      {
        deviceId: a.id,
        receivedAt: at,
        reports: [
          { id: ofA!, status: 'delivered' },
          { id: ofB!, status: 'failed', error: 'not mine' },
        ],
      },
      { deviceId: b.id, receivedAt: at, reports: [{ id: ofB!, status: 'sent' }] },
    ]);

    expect(result.applied.sort((x, y) => x.status.localeCompare(y.status))).toEqual([
      { id: ofA, status: 'delivered' },
      { id: ofB, status: 'sent' },
    ]);
    const rows = await api.db.message.findMany({ where: { id: { in: [ofA!, ofB!] } } });
    expect(Object.fromEntries(rows.map((m) => [m.id, [m.state, m.error]]))).toEqual({ [ofA!]: ['delivered', null], [ofB!]: ['sent', null] });
  });
});

describe('dispatcher metrics', () => {
  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });

  it('serves Prometheus metrics on METRICS_PORT with assignments, jobs and batch sizes', async () => {
    const port = await freePort();
    await startDispatcher({ METRICS_PORT: String(port) });
    const { userId, apiKey } = await userWithDevices(1);
    await sendSingles(apiKey, 3);
    await waitUntilAssigned(userId, 3);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^smsgw_message_transitions_total\{state="assigned"\} 3$/m);
    expect(text).toMatch(/^smsgw_dispatcher_jobs_total\{job_name="message.dispatch",outcome="assigned"\} 3$/m);
    expect(text).toMatch(/^smsgw_dispatcher_assign_batch_size_count \d+$/m);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });

  it("counts the state changes that a device's reports caused by device, and every state from 0", async () => {
    const port = await freePort();
    await startDispatcher({ METRICS_PORT: String(port) });
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(await scrape()).toMatch(/^smsgw_message_transitions_total\{state="failed"\} 0$/m);
    const { userId, apiKey, devices } = await userWithDevices(1);
    const [device] = devices;
    const ids = await sendSingles(apiKey, 3);
    await waitUntilAssigned(userId, 3);
    expect((await claim(device!.token)).statusCode).toBe(200);

    const reports = [...ids.slice(0, 2).map((id) => ({ id, status: 'sent' })), { id: ids[2], status: 'failed', error: 'no credit' }];
    const res = await api.app.inject({
      method: 'POST',
      url: '/api/v1/device/reports',
      headers: { authorization: `Bearer ${device!.token}` },
      payload: { reports },
    });
    expect(res.statusCode).toBe(202);

    await vi.waitFor(
      async () => {
        const text = await scrape();
        expect(text).toMatch(new RegExp(`^smsgw_device_message_transitions_total\\{device_id="${device!.id}",state="sent"\\} 2$`, 'm'));
        expect(text).toMatch(new RegExp(`^smsgw_device_message_transitions_total\\{device_id="${device!.id}",state="failed"\\} 1$`, 'm'));
        expect(text).toMatch(/^smsgw_message_transitions_total\{state="failed"\} 1$/m);
      },
      { timeout: 15_000, interval: 100 },
    );
  });
});
