import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishWakeups } from '@smsgw/queue';
import { createTestUser, startTestApi, type TestApi } from '../../../testing/test-api.ts';
import { enrolPhone, openPhoneStream, phoneRequest, type EnrolledPhone, type PhoneStream } from '../../../testing/test-phone.ts';

/** The event stream over HTTP on a real port, read as the app's SSE client reads it. */
let api: TestApi;
let base: string;
const open: PhoneStream[] = [];

beforeAll(async () => {
  api = await startTestApi({ DEVICE_HEARTBEAT_SECONDS: '1' });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((stream) => stream.close()));
  // The server has seen every stream close (none is left listening).
  await vi.waitFor(() => expect(api.app.wakeups.connectedDevices).toBe(0), { timeout: 5_000 });
});
afterAll(async () => {
  await api?.close();
});

const NULL_EVENT = (event: string) => ({ event, data: 'null', id: undefined });

async function phone(): Promise<EnrolledPhone> {
  const { userId } = await createTestUser(api.db, { devices: 0 });
  return enrolPhone(api.app, api.db, userId);
}

async function stream(p: EnrolledPhone, path = '/mobile/v1/events'): Promise<PhoneStream> {
  const opened = await openPhoneStream(`${base}${path}`, p.token);
  open.push(opened);
  return opened;
}

const names = (s: PhoneStream) => s.events.map((e) => e.event);
const enqueued = (s: PhoneStream) => s.events.filter((e) => e.event === 'MessageEnqueued').length;

describe('GET /events', () => {
  it('opens with SettingsUpdated and WebhooksUpdated, then MessageEnqueued, every frame with `data: null`', async () => {
    const p = await phone();

    const s = await stream(p);

    expect([s.status, s.contentType]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
    await vi.waitFor(() => expect(s.events).toHaveLength(3), { timeout: 5_000 });
    expect(s.events).toEqual([NULL_EVENT('SettingsUpdated'), NULL_EVENT('WebhooksUpdated'), NULL_EVENT('MessageEnqueued')]);
  });

  it('sends a keepalive comment every DEVICE_HEARTBEAT_SECONDS and keeps the phone seen, without taking OkHttp’s User-Agent as the app version', async () => {
    const p = await phone();
    await api.db.device.update({ where: { id: p.id }, data: { appVersion: '1.60.0' } });
    const s = await stream(p, '/api/mobile/v1//events');

    await vi.waitFor(() => expect(s.comments.length).toBeGreaterThanOrEqual(2), { timeout: 5_000 });

    expect(new Set(s.comments)).toEqual(new Set(['keepalive']));
    const row = await api.db.device.findUniqueOrThrow({ where: { id: p.id } });
    expect(row.streamSeenAt!.getTime()).toBeGreaterThan(Date.now() - 5_000);
    expect(row.appVersion).toBe('1.60.0');
  });

  it('wakes every open stream of the phone, at most once a second per stream', async () => {
    const p = await phone();
    const streams = [await stream(p), await stream(p, '/api/mobile/v1/events')];
    await vi.waitFor(() => expect(streams.map(enqueued)).toEqual([1, 1]), { timeout: 5_000 });

    for (let i = 0; i < 5; i++) await publishWakeups(api.app.redis, api.config.QUEUE_PREFIX, [p.id]);

    await vi.waitFor(() => expect(streams.map(enqueued)).toEqual([2, 2]), { timeout: 5_000 });
    // Two keepalives later (a second each) any wake-up still held back would have been sent.
    const comments = streams.map((s) => s.comments.length);
    await vi.waitFor(() => expect(streams.map((s, i) => s.comments.length - comments[i]!).every((added) => added >= 2)).toBe(true), { timeout: 5_000 });
    expect(streams.map(enqueued)).toEqual([2, 2]);
    for (const s of streams) {
      const times = s.events.flatMap((e, i) => (e.event === 'MessageEnqueued' ? [s.arrivals[i]!] : []));
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
    }
  });

  it('keeps five streams of one phone open at once, none closed for a newer one', async () => {
    const p = await phone();
    const streams: PhoneStream[] = [];
    for (let i = 0; i < 5; i++) streams.push(await stream(p));
    await vi.waitFor(() => expect(streams.map(enqueued)).toEqual([1, 1, 1, 1, 1]), { timeout: 5_000 });

    await publishWakeups(api.app.redis, api.config.QUEUE_PREFIX, [p.id]);

    await vi.waitFor(() => expect(streams.map(enqueued)).toEqual([2, 2, 2, 2, 2]), { timeout: 5_000 });
    expect(streams.map((s) => names(s).slice(0, 2))).toEqual(streams.map(() => ['SettingsUpdated', 'WebhooksUpdated']));
  });

  it('answers an unknown token with 401 JSON rather than a stream', async () => {
    const p = await phone();
    await api.db.device.update({ where: { id: p.id }, data: { deletedAt: new Date() } });
    const s = await stream(p);
    expect([s.status, s.contentType]).toEqual([401, expect.stringMatching(/^application\/json/)]);
    expect((await phoneRequest(api.app, 'GET', '/mobile/v1/settings', { authorization: `Bearer ${p.token}` })).statusCode).toBe(401);
  });
  it('writes a phone seen with its stream’s keepalives, not with each request it makes while the stream is open', async () => {
    const p = await phone();
    await stream(p);
    await vi.waitFor(() => expect(api.app.wakeups.connectedDevices).toBeGreaterThan(0));
    const queries = vi.spyOn(api.app.sql, 'query');
    // Each request comes later than the "seen" throttle of a request without a stream (5 s).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < 3; i++) {
        vi.setSystemTime(Date.now() + 6_000);
        expect((await phoneRequest(api.app, 'GET', '/mobile/v1/message', { authorization: `Bearer ${p.token}` })).statusCode).toBe(200);
      }
    } finally {
      vi.useRealTimers();
    }
    const statements = queries.mock.calls.map(([text]) => String(text));
    queries.mockRestore();
    expect(statements.filter((text) => text.startsWith('UPDATE devices SET last_seen_at'))).toEqual([]);
  });
});
