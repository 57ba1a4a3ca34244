/**
 * The SMS Gate mobile API (apps/api/src/routes/device-protocols/sms-gate) with the dispatcher that assigns the
 * messages, wakes the phone and applies its snapshots: both apps in one process, driven as the
 * unmodified app drives them (one snapshot per PATCH, dates in the phone's offset, `//` paths).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { send, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';
import { phoneOwner, type PhoneOwner, openPhoneStream, phoneDate, phoneRequest, type EnrolledPhone, type PhoneStream } from '@smsgw/api/testing/phone';

let api: TestApi;
let base: string;
const dispatchers: Dispatcher[] = [];
const streams: PhoneStream[] = [];

beforeAll(async () => {
  // A keepalive every second: a test waits for one to be past the stream's first wake-up.
  api = await startTestApi({ DEVICE_HEARTBEAT_SECONDS: '1' });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  dispatchers.push(await startTestDispatcher(api));
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
  // The server has seen every stream close (none is left listening).
  await vi.waitFor(() => expect(api.app.wakeups.connectedDevices).toBe(0), { timeout: 5_000 });
});
afterAll(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  await api?.close();
});

type Owner = PhoneOwner;
const owner = () => phoneOwner(api.app, api.db);

/** Messages sent through the API and assigned to the phone by the dispatcher. */
async function assigned({ apiKey }: Owner, count = 1): Promise<string[]> {
  const res = await send(api.app, apiKey, { recipients: Array.from({ length: count }, uniquePhone), body: 'hello from smsgw' });
  expect(res.statusCode).toBe(200);
  const ids: string[] = res.json().message_ids;
  await vi.waitFor(async () => expect((await rows(ids)).map((m) => m.state)).toEqual(ids.map(() => 'assigned')), { timeout: 10_000, interval: 50 });
  return ids;
}

async function rows(ids: string[]) {
  const found = await api.db.message.findMany({ where: { id: { in: ids } } });
  return ids.map((id) => found.find((m) => m.id === id)!);
}

const message = (id: string) => api.db.message.findUniqueOrThrow({ where: { id } });

async function eventStates(id: string): Promise<string[]> {
  return (await api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } })).map((e) => e.state);
}

async function pulled(phone: EnrolledPhone): Promise<string[]> {
  const res = await phoneRequest(api.app, 'GET', '/api/mobile/v1//message?order=lifo', { authorization: `Bearer ${phone.token}` });
  expect(res.statusCode).toBe(200);
  return (res.json() as { id: string }[]).map((m) => m.id);
}

/** One `PATCH /message` as the app sends it, and then until the dispatcher handled every queued report. */
async function report(phone: EnrolledPhone, body: unknown[]): Promise<void> {
  const res = await phoneRequest(api.app, 'PATCH', '/mobile/v1//message', { authorization: `Bearer ${phone.token}`, body });
  expect(res.statusCode).toBe(204);
  await vi.waitFor(
    async () => {
      const counts = await api.app.reportsQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed');
      expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, prioritized: 0, paused: 0, failed: 0 });
    },
    { timeout: 15_000, interval: 50 },
  );
}

function snapshot(id: string, state: string, states: Record<string, Date>, error?: string) {
  return {
    id,
    state,
    recipients: [{ phoneNumber: '+15551234567', state, ...(error !== undefined && { error }) }],
    states: Object.fromEntries(Object.entries(states).map(([name, at]) => [name, phoneDate(at)])),
  };
}

/** The phone's clock now (after the offer, before the dispatcher applies the report: smsgw keeps it between). */
const phoneNow = () => new Date();

async function openStream(phone: EnrolledPhone, path = '/mobile/v1/events'): Promise<PhoneStream> {
  const s = await openPhoneStream(`${base}${path}`, phone.token);
  streams.push(s);
  return s;
}

const enqueuedAt = (s: PhoneStream) => s.events.flatMap((e, i) => (e.event === 'MessageEnqueued' ? [s.arrivals[i]!] : []));

describe('wake-up', () => {
  it('sends MessageEnqueued within a second of the assignment, to each of the phone’s two streams', async () => {
    const o = await owner();
    const both = [await openStream(o.phone), await openStream(o.phone, '/api/mobile/v1//events')];
    // Past the wake-up of the connect and its one-second spacing.
    await vi.waitFor(
      () => {
        for (const s of both) expect([enqueuedAt(s).length, s.comments.length > 0]).toEqual([1, true]);
      },
      { timeout: 5_000 },
    );

    const [id] = await assigned(o);

    await vi.waitFor(() => expect(both.map((s) => enqueuedAt(s).length)).toEqual([2, 2]), { timeout: 5_000, interval: 10 });
    const { assignedAt } = await message(id!);
    for (const s of both) expect(enqueuedAt(s)[1]! - assignedAt!.getTime()).toBeLessThan(1000);
    expect(await pulled(o.phone)).toEqual([id]);
  });

  it('wakes the phone again once it acknowledged a full pull while messages it was never offered wait, not before', async () => {
    const o = await owner();
    const stream = await openStream(o.phone);
    await vi.waitFor(() => expect(enqueuedAt(stream).length).toBe(1), { timeout: 5_000 });
    const ids = await assigned(o, 130);
    // The dispatcher wakes the phone after each batch it assigns (one or more for 130 messages): every
    // one of those wake-ups has left before the pull, so that the count below sees only later ones.
    await vi.waitFor(
      async () =>
        expect(await api.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).toMatchObject({
          waiting: 0,
          active: 0,
          delayed: 0,
          prioritized: 0,
        }),
      { timeout: 10_000, interval: 50 },
    );
    await vi.waitFor(() => expect(enqueuedAt(stream).length).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
    // A wake-up that came within a second of the previous one is held back up to a second: wait until
    // none has arrived for longer than that, so that none of the batches' wake-ups is still to come.
    await vi.waitFor(() => expect(Date.now() - enqueuedAt(stream).at(-1)!).toBeGreaterThan(1_300), { timeout: 10_000, interval: 50 });

    const first = await pulled(o.phone);
    expect(first).toHaveLength(100);
    const wakeups = enqueuedAt(stream).length;
    // The phone acknowledges what it took, one snapshot per PATCH, as the app does.
    const acknowledge = async (id: string) => {
      const res = await phoneRequest(api.app, 'PATCH', '/mobile/v1/message', {
        authorization: `Bearer ${o.phone.token}`,
        body: [snapshot(id, 'Processed', { Pending: phoneNow(), Processed: phoneNow() })],
      });
      expect(res.statusCode).toBe(204);
    };
    for (const id of first.slice(0, -1)) await acknowledge(id);
    // Not while it still holds an offer it did not acknowledge: a pull would only repeat its reports.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(enqueuedAt(stream).length).toBe(wakeups);

    await acknowledge(first.at(-1)!);

    await vi.waitFor(() => expect(enqueuedAt(stream).length).toBeGreaterThan(wakeups), { timeout: 5_000, interval: 20 });
    await vi.waitFor(async () => expect(new Set(await pulled(o.phone))).toEqual(new Set(ids.filter((id) => !first.includes(id)))), { timeout: 10_000 });
  });
});

describe('a message’s life on the phone', () => {
  it('is pulled again until the first snapshot acknowledges it, then sent and delivered at the phone’s times', async () => {
    const o = await owner();
    const [id] = (await assigned(o)) as [string];

    expect([await pulled(o.phone), await pulled(o.phone)]).toEqual([[id], [id]]);
    const pending = phoneNow();
    await report(o.phone, [snapshot(id, 'Pending', { Pending: pending })]);
    expect(await pulled(o.phone)).toEqual([]);
    expect(await message(id)).toMatchObject({ state: 'sending', sendingAt: pending });

    const sentAt = phoneNow();
    await report(o.phone, [snapshot(id, 'Processed', { Pending: pending, Processed: pending })]);
    await report(o.phone, [snapshot(id, 'Sent', { Pending: pending, Processed: pending, Sent: sentAt })]);
    expect(await message(id)).toMatchObject({ state: 'sent', sentAt });

    const deliveredAt = phoneNow();
    await report(o.phone, [snapshot(id, 'Delivered', { Pending: pending, Sent: sentAt, Delivered: deliveredAt })]);
    expect(await message(id)).toMatchObject({ state: 'delivered', sentAt, deliveredAt });
    expect(await eventStates(id)).toEqual(['assigned', 'sending', 'sent', 'delivered']);
  });

  it('never moves backwards: late and repeated snapshots after Delivered change nothing', async () => {
    const o = await owner();
    const [id] = (await assigned(o)) as [string];
    await pulled(o.phone);
    const sentAt = phoneNow();
    const deliveredAt = phoneNow();
    await report(o.phone, [snapshot(id, 'Delivered', { Sent: sentAt, Delivered: deliveredAt })]);
    const before = await message(id);
    expect(before).toMatchObject({ state: 'delivered', sentAt, deliveredAt });

    for (const late of ['Sent', 'Processed', 'Pending', 'Failed', 'Cancelled', 'Delivered']) {
      await report(o.phone, [snapshot(id, late, { Pending: phoneNow(), Sent: phoneNow(), Delivered: phoneNow(), Failed: phoneNow() }, 'late')]);
    }

    expect(await message(id)).toEqual(before);
    expect(await eventStates(id)).toEqual(['assigned', 'sent', 'delivered']);
  });

  it('marks a message delivered without a Sent time as sent at its delivery', async () => {
    const o = await owner();
    const [id] = (await assigned(o)) as [string];
    await pulled(o.phone);
    const deliveredAt = phoneNow();

    await report(o.phone, [snapshot(id, 'Delivered', { Delivered: deliveredAt })]);

    expect(await message(id)).toMatchObject({ state: 'delivered', sentAt: deliveredAt, deliveredAt });
  });

  it('fails a message with the recipient’s error, and a cancelled one as cancelled on the device', async () => {
    const o = await owner();
    const [failed, cancelled] = (await assigned(o, 2)) as [string, string];
    await pulled(o.phone);
    const failedAt = phoneNow();

    await report(o.phone, [snapshot(failed, 'Failed', { Failed: failedAt }, 'Send result: RESULT_ERROR_NO_SERVICE (4)')]);
    await report(o.phone, [snapshot(cancelled, 'Cancelled', { Cancelled: phoneNow() })]);

    expect(await message(failed)).toMatchObject({ state: 'failed', failedAt, error: 'Send result: RESULT_ERROR_NO_SERVICE (4)' });
    expect(await message(cancelled)).toMatchObject({ state: 'failed', error: 'Cancelled on the device.' });
  });

  it('applies each element on its own: a bad one, an unknown id or another phone’s message never fails the others', async () => {
    const a = await owner();
    const b = await owner();
    const [sent, untouched] = (await assigned(a, 2)) as [string, string];
    const [theirs] = (await assigned(b)) as [string];
    await pulled(a.phone);
    await pulled(b.phone);
    const sentAt = phoneNow();

    await report(a.phone, [
      null,
      'Sent',
      { id: sent },
      snapshot(randomUUID(), 'Sent', { Sent: sentAt }),
      snapshot(theirs, 'Sent', { Sent: sentAt }),
      snapshot(untouched, 'Exploded', { Sent: sentAt }),
      snapshot(sent, 'Sent', { Sent: sentAt }),
    ]);

    expect((await rows([sent, untouched, theirs])).map((m) => [m.state, m.sentAt])).toEqual([
      ['sent', sentAt],
      ['assigned', null],
      ['assigned', null],
    ]);
    expect(await pulled(a.phone)).toEqual([untouched]);
  });
});
