import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { offerValidUntil } from '@smsgw/core';
import { assignMessages } from '@smsgw/db';
import type { DeviceReport } from '@smsgw/queue';
import { send, startTestApi, uniquePhone, type TestApi } from '../../../testing/test-api.ts';
import { MAX_SNAPSHOTS } from './wire.ts';
import { phoneOwner, type PhoneOwner, phoneDate, phoneRequest, type EnrolledPhone } from '../../../testing/test-phone.ts';
import { reportsOfJob } from '@smsgw/queue';

/** The pull and the snapshots, without a dispatcher: snapshots are checked as the reports they queue. */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Owner = PhoneOwner;
const owner = () => phoneOwner(api.app, api.db);

/** Messages sent to the phone one request each (so each is newer than the one before) and assigned to it. */
async function assigned({ apiKey, phone }: Owner, count: number, body = 'hello from smsgw'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await send(api.app, apiKey, { recipients: [uniquePhone()], body, device_id: phone.id });
    expect(res.statusCode).toBe(200);
    ids.push(...(res.json().message_ids as string[]));
  }
  await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: phone.id })), now: new Date() });
  return ids;
}

function pull(phone: EnrolledPhone, path = '/mobile/v1/message') {
  return phoneRequest(api.app, 'GET', path, { authorization: `Bearer ${phone.token}` });
}

async function pulledIds(phone: EnrolledPhone, path?: string): Promise<string[]> {
  const res = await pull(phone, path);
  expect(res.statusCode).toBe(200);
  return (res.json() as { id: string }[]).map((m) => m.id);
}

function patch(phone: EnrolledPhone, body: unknown, options: { raw?: string; headers?: Record<string, string> } = {}) {
  return phoneRequest(api.app, 'PATCH', '/mobile/v1/message', { authorization: `Bearer ${phone.token}`, body, ...options });
}

/** The reports queued for the dispatcher from this phone, in the order they were queued. */
async function queuedReports(phone: EnrolledPhone): Promise<DeviceReport[]> {
  const jobs = await api.app.reportsQueue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'paused']);
  return jobs
    .sort((a, b) => a.timestamp - b.timestamp || Number(a.id) - Number(b.id))
    .flatMap(reportsOfJob)
    .filter((p) => p.deviceId === phone.id)
    .flatMap((p) => p.reports);
}

function snapshot(id: string, state: string, states: Record<string, string>, error?: string) {
  return { id, state, recipients: [{ phoneNumber: '+15551234567', state, ...(error !== undefined && { error }) }], states };
}

describe('GET /message', () => {
  it('returns the same unacknowledged message on every pull, with the same validUntil, and changes nothing but offered_at', async () => {
    const o = await owner();
    const [id] = await assigned(o, 1);

    const first = (await pull(o.phone)).json();
    const offeredAt = (await api.db.message.findUniqueOrThrow({ where: { id: id! } })).offeredAt;
    const again = [(await pull(o.phone)).json(), (await pull(o.phone, '/api/mobile/v1//message?order=lifo')).json()];

    expect(first.map((m: { id: string }) => m.id)).toEqual([id]);
    expect(again).toEqual([first, first]);
    const row = await api.db.message.findUniqueOrThrow({ where: { id: id! } });
    expect([row.state, row.offeredAt, row.sendingAt]).toEqual(['assigned', offeredAt, null]);
  });

  it('gives each item the shape the app reads: no nulls, ISO dates, validUntil from the first offer', async () => {
    const o = await owner();
    const [id] = await assigned(o, 1, 'Grüße 👋');

    const res = await pull(o.phone);

    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const row = await api.db.message.findUniqueOrThrow({ where: { id: id! } });
    const validUntil = offerValidUntil({ offeredAt: row.offeredAt!, createdAt: row.createdAt }, api.config).toISOString();
    expect(res.json()).toEqual([
      {
        id,
        textMessage: { text: 'Grüße 👋' },
        message: 'Grüße 👋',
        phoneNumbers: [row.to],
        withDeliveryReport: true,
        isEncrypted: false,
        validUntil,
        createdAt: row.createdAt.toISOString(),
        state: 'Pending',
      },
    ]);
    expect(res.json()[0].validUntil).toMatch(ISO_MS);
    expect(res.body).not.toContain('null');
  });

  it("passes SMS Gate's withDeliveryReport and priority of a message sent through /3rdparty/v1 on to the phone", async () => {
    const o = await owner();
    const res = await api.app.inject({
      method: 'POST',
      url: '/3rdparty/v1/messages',
      headers: { authorization: `Bearer ${o.apiKey}` },
      payload: { message: 'urgent', phoneNumbers: [uniquePhone()], deviceId: o.phone.id, withDeliveryReport: false, priority: 100 },
    });
    expect(res.statusCode).toBe(202);
    const ids = (await api.db.message.findMany({ where: { batch: { externalId: res.json().id } } })).map((m) => m.id);
    await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: o.phone.id })), now: new Date() });
    expect((await pull(o.phone)).json()).toEqual([expect.objectContaining({ id: ids[0], withDeliveryReport: false, priority: 100 })]);
  });

  it('orders newest first without `order` and with `lifo` (or anything unknown), oldest first with `fifo`', async () => {
    const o = await owner();
    const ids = await assigned(o, 3);
    const newest = [...ids].reverse();

    expect(await pulledIds(o.phone)).toEqual(newest);
    expect(await pulledIds(o.phone, '/mobile/v1/message?order=lifo')).toEqual(newest);
    expect(await pulledIds(o.phone, '/mobile/v1/message?order=LIFO')).toEqual(newest);
    expect(await pulledIds(o.phone, '/mobile/v1//message?order=fifo')).toEqual(ids);
  });

  it('returns at most 100 messages', async () => {
    const o = await owner();
    const res = await send(api.app, o.apiKey, { recipients: Array.from({ length: 101 }, uniquePhone), body: 'many', device_id: o.phone.id });
    const ids: string[] = res.json().message_ids;
    await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: o.phone.id })), now: new Date() });

    expect(await pulledIds(o.phone)).toHaveLength(100);
  });

  it('answers at once with [] when there is nothing, offers nothing to a disabled phone and never another phone’s messages', async () => {
    const a = await owner();
    const b = await owner();
    await assigned(a, 1);

    expect(await pulledIds(b.phone)).toEqual([]);
    await api.db.device.update({ where: { id: a.phone.id }, data: { enabled: false } });
    expect(await pulledIds(a.phone)).toEqual([]);
  });
});

describe('PATCH /message', () => {
  it('queues each snapshot as the reports it stands for, with times converted from the phone’s offset to UTC', async () => {
    const o = await owner();
    const ids = await assigned(o, 6);
    const t = (seconds: number) => new Date(Date.UTC(2026, 6, 1, 11, 3, seconds, 123));
    const [pending, processed, sent, delivered, failed, cancelled] = ids as [string, string, string, string, string, string];
    const elements = [
      snapshot(pending, 'Pending', { Pending: phoneDate(t(0)) }),
      snapshot(processed, 'Processed', { Pending: phoneDate(t(0), -300), Processed: phoneDate(t(1), -300) }),
      snapshot(sent, 'Sent', { Pending: phoneDate(t(0)), Processed: phoneDate(t(1)), Sent: phoneDate(t(2)) }),
      snapshot(delivered, 'Delivered', { Sent: phoneDate(t(2), 330), Delivered: phoneDate(t(5), 330) }),
      snapshot(failed, 'Failed', { Failed: phoneDate(t(3)) }, 'Send result: RESULT_ERROR_NO_SERVICE (4)'),
      snapshot(cancelled, 'Cancelled', { Cancelled: phoneDate(t(4)) }),
    ];
    // One element per call, as the app sends them.
    for (const element of elements) expect((await patch(o.phone, [element])).statusCode).toBe(204);

    expect(await queuedReports(o.phone)).toEqual([
      { id: pending, status: 'sending', at: t(0).toISOString() },
      { id: processed, status: 'sending', at: t(0).toISOString() },
      { id: sent, status: 'sent', at: t(2).toISOString() },
      { id: delivered, status: 'sent', at: t(2).toISOString() },
      { id: delivered, status: 'delivered', at: t(5).toISOString() },
      { id: failed, status: 'failed', at: t(3).toISOString(), error: 'Send result: RESULT_ERROR_NO_SERVICE (4)', retryable: true },
      { id: cancelled, status: 'failed', at: t(4).toISOString(), error: 'Cancelled on the device.' },
    ]);
  });

  it('applies each element on its own: malformed ones, unknown states and unparsable dates never refuse the others', async () => {
    const o = await owner();
    const [good, other] = await assigned(o, 2);
    const body = [
      null,
      42,
      'Sent',
      [],
      {},
      { id: good },
      { id: 7, state: 'Sent' },
      { id: good, state: 'Exploded', states: {} },
      { id: good, state: 'sent' },
      { id: good, state: 'Sent', states: 'yesterday' },
      { id: good, state: 'Sent', recipients: 'all' },
      { id: 'x'.repeat(500), state: 'Sent' },
      { id: other, state: 'Sent', states: { Sent: '+-5:00 garbage' } },
      { id: good, state: 'Failed', recipients: [null, { error: 5 }, { error: 'Bad\u0000luck' }], states: { Failed: '2026-07-01T14:03:05.123+0300' } },
    ];

    const before = Date.now();
    const res = await patch(o.phone, body);

    expect(res.statusCode).toBe(204);
    const reports = await queuedReports(o.phone);
    expect(reports).toEqual([
      { id: other, status: 'sent', at: expect.stringMatching(ISO_MS) },
      { id: good, status: 'failed', at: '2026-07-01T11:03:05.123Z', error: 'Bad\uFFFDluck' },
    ]);
    expect(Date.parse(reports[0]!.at!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('takes a date outside years 0 to 9999 as the arrival time: 204, never a 503 the app would retry forever', async () => {
    const o = await owner();
    const [late, early] = await assigned(o, 2);
    const before = Date.now();

    const res = await patch(o.phone, [
      snapshot(late!, 'Sent', { Sent: '9999-12-31T23:59:59.999-23:59' }),
      snapshot(early!, 'Sent', { Sent: '0000-01-01T00:00:00.000+01:00' }),
    ]);

    expect(res.statusCode).toBe(204);
    const reports = await queuedReports(o.phone);
    expect(reports.map((r) => [r.id, r.status])).toEqual([
      [late, 'sent'],
      [early, 'sent'],
    ]);
    for (const { at } of reports) expect(Date.parse(at!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('needs no statement for a snapshot of a message it offered, even one that comes after its final snapshot', async () => {
    const o = await owner();
    const [id] = (await assigned(o, 1)) as [string];
    expect(await pulledIds(o.phone)).toEqual([id]);
    const now = phoneDate(new Date());
    const queries = vi.spyOn(api.app.sql, 'query');
    // Snapshots overtake each other in the app: Sent may come after Delivered.
    for (const [state, states] of [
      ['Processed', { Processed: now }],
      ['Delivered', { Processed: now, Sent: now, Delivered: now }],
      ['Sent', { Processed: now, Sent: now }],
    ] as const) {
      expect((await patch(o.phone, [snapshot(id, state, states)])).statusCode).toBe(204);
    }
    const statements = queries.mock.calls.map(([text]) => String(text));
    queries.mockRestore();
    expect(statements.filter((text) => text.includes('FROM messages'))).toEqual([]);
    expect((await queuedReports(o.phone)).map((r) => r.status)).toEqual(['sending', 'sent', 'delivered', 'sent']);
  });

  it('answers 204 to snapshots of unknown ids and of another phone’s messages, and queues nothing', async () => {
    const a = await owner();
    const b = await owner();
    const [theirs] = await assigned(b, 1);

    for (const id of [randomUUID(), theirs!, 'PyDmBQZZXYmyxMwED8Fzy']) {
      expect((await patch(a.phone, [snapshot(id, 'Sent', { Sent: phoneDate(new Date()) })])).statusCode).toBe(204);
    }

    expect(await queuedReports(a.phone)).toEqual([]);
    expect(await queuedReports(b.phone)).toEqual([]);
  });

  it('takes the app’s content type with a charset and a long error text, cut to the report’s limit', async () => {
    const o = await owner();
    const [id] = await assigned(o, 1);
    const body = JSON.stringify([snapshot(id!, 'Failed', {}, 'e'.repeat(5000))]);

    const res = await patch(o.phone, undefined, { raw: body, headers: { 'content-type': 'application/json; charset=UTF-8' } });

    expect(res.statusCode).toBe(204);
    expect(await queuedReports(o.phone)).toEqual([{ id, status: 'failed', error: 'e'.repeat(1000) }]);
  });

  it.each([
    ['an object', { raw: '{"id": "x", "state": "Sent"}' }],
    ['a string', { raw: '"Sent"' }],
    ['null', { raw: 'null' }],
    ['malformed JSON', { raw: '[{"id": "x", "state": ' }],
    ['an empty body', { raw: '' }],
    [`${MAX_SNAPSHOTS + 1} elements`, { raw: JSON.stringify(Array.from({ length: MAX_SNAPSHOTS + 1 }, () => ({ id: randomUUID(), state: 'Sent' }))) }],
  ])('refuses %s with 400 JSON', async (_, options) => {
    const o = await owner();
    const res = await patch(o.phone, undefined, options);
    expect({ status: res.statusCode, type: res.headers['content-type'], error: res.json().error }).toEqual({
      status: 400,
      type: expect.stringMatching(/^application\/json/),
      error: 'invalid_request',
    });
  });

  it.each([
    ['text/plain', 415, 'unsupported_media_type'],
    ['application/xml', 415, 'unsupported_media_type'],
  ])('refuses a %s body with %i JSON', async (type, status, error) => {
    const o = await owner();
    const res = await patch(o.phone, undefined, { raw: '<Sent/>', headers: { 'content-type': type } });
    expect({ status: res.statusCode, type: res.headers['content-type'], error: res.json().error }).toEqual({
      status,
      type: expect.stringMatching(/^application\/json/),
      error,
    });
  });

  it('answers 204 to an empty array', async () => {
    const o = await owner();
    expect((await patch(o.phone, [])).statusCode).toBe(204);
  });
});
