import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { send, startTestApi, uniquePhone as phone, type TestApi, type TestDevice } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';

/**
 * The set-up of the device protocol's tests (test/integration/device-*.int.test.ts): the API of
 * apps/api/src/routes/device-protocols/native with the dispatcher that assigns the messages and applies the reports,
 * both in the test's process, and what a device does with them.
 */
/** The API of the file's tests (set by `useDeviceProtocolApi`'s hooks). */
export let api: TestApi;
const dispatchers: Dispatcher[] = [];
const streams: AbortController[] = [];
let baseUrl: string | undefined;

/** One API for the tests of the file; the dispatchers and streams a test started end after it. */
export function useDeviceProtocolApi(): void {
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.abort();
    await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  });
  afterAll(async () => {
    await api?.close();
    baseUrl = undefined;
  });
}

export const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export async function startDispatcher(): Promise<void> {
  dispatchers.push(await startTestDispatcher(api));
}

/** An abort controller for an event stream, aborted after the test if the test has not. */
export function streamStop(): AbortController {
  const stop = new AbortController();
  streams.push(stop);
  return stop;
}

/** The API on a real port (for the event stream and the client's fetch); the same app serves inject. */
export async function listening(): Promise<string> {
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
export async function assignedTo(apiKey: string, device: TestDevice, count: number): Promise<string[]> {
  const res = await send(api.app, apiKey, { recipients: Array.from({ length: count }, phone), body: 'hello from the test', device_id: device.id });
  expect(res.statusCode).toBe(200);
  const ids: string[] = res.json().message_ids;
  const moved = await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: device.id })), now: new Date() });
  expect(moved).toHaveLength(count);
  // With a dispatcher running, its job for each message (a no-op now) may still hold the row, and a
  // claim skips locked rows: wait until those jobs are done.
  if (dispatchers.length > 0) {
    await vi.waitFor(
      async () =>
        expect(await api.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).toMatchObject({
          waiting: 0,
          active: 0,
          delayed: 0,
          prioritized: 0,
        }),
      { timeout: 10_000, interval: 20 },
    );
  }
  return ids;
}

export function asDevice(token: string, method: 'GET' | 'POST', url: string, payload?: object) {
  return api.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });
}

export function claim(token: string, query = '') {
  return asDevice(token, 'GET', `/api/v1/device/messages${query ? `?${query}` : ''}`);
}

export async function claimIds(token: string, query = ''): Promise<string[]> {
  const res = await claim(token, query);
  expect(res.statusCode).toBe(200);
  return (res.json().messages as { id: string }[]).map((m) => m.id);
}

export function report(token: string, reports: object[]) {
  return asDevice(token, 'POST', '/api/v1/device/reports', { reports });
}

export function message(id: string) {
  return api.db.message.findUniqueOrThrow({ where: { id } });
}

/** The message's history in the order it was written (`at` is the device's clock for reports). */
export async function eventStates(id: string): Promise<string[]> {
  const events = await api.db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });
  return events.map((e) => e.state);
}

/** Resolves once every report job taken so far was handled (handled jobs are removed). */
export async function reportsHandled(): Promise<void> {
  await vi.waitFor(
    async () => {
      const counts = await api.app.reportsQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed');
      expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, prioritized: 0, paused: 0, failed: 0 });
    },
    { timeout: 15_000, interval: 50 },
  );
}

/** The number of devices that have a stream or long poll open on this API process. */
export const listeners = () => api.app.wakeups.connectedDevices;

export function disjoint(lists: string[][]): boolean {
  const all = lists.flat();
  return new Set(all).size === all.length;
}
