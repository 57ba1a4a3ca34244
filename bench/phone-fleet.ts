import { performance } from 'node:perf_hooks';
import { ApiError, SmsGateClient } from '@smsgw/client';
import { createPairing, type Db, type NewPairing } from '@smsgw/db';
import { saveRegistration } from '../apps/device-sim/src/phone-state.ts';

/** One pairing of `userId` per phone, named phone-0, phone-1, …: each enrols one SMS Gate phone. */
export async function createPairings(db: Db, userId: string, count: number): Promise<NewPairing[]> {
  const pairings: NewPairing[] = [];
  for (let i = 0; i < count; i++) pairings.push(await createPairing(db, { userId, name: `phone-${i}`, ttlSeconds: 3600 }));
  return pairings;
}

/**
 * Enrols phone n with pairing n's code (`POST /device`, the app's "Sign in by code"), `inFlight` at
 * a time, and stores its registration in `stateDir` as the app keeps it (the simulator's
 * phone-state.ts): a simulator started on that directory then starts as the app does after
 * enrolment (PATCH /device, pull, settings, webhooks, event stream). Returns the device ids by phone.
 */
export async function enrolPhones(options: { mobileUrl: string; codes: string[]; stateDir: string; inFlight: number }): Promise<string[]> {
  const ids: string[] = new Array(options.codes.length);
  let next = 0;
  const worker = async () => {
    while (next < options.codes.length) {
      const index = next++;
      const client = new SmsGateClient(options.mobileUrl);
      // A 5xx spent nothing (the registration's transaction rolled back): the app tries again.
      const register = () => client.register({ auth: { code: options.codes[index]! }, name: `Simulated/sim_phone_${index}` });
      const device = await register().catch((error: unknown) => {
        if (error instanceof ApiError && error.status >= 500) return register();
        throw error;
      });
      await saveRegistration(options.stateDir, index, { id: device.id, token: device.token, login: device.login });
      ids[index] = device.id;
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, worker));
  return ids;
}

/** A device as `GET /api/v1/devices` lists it, the fields the benchmarks read. */
export interface ListedDevice {
  id: string;
  available: boolean;
  connection: 'stream' | 'requests' | null;
  last_seen_at: string | null;
}

/** Walks `GET /api/v1/devices` page after page (following `next_cursor`): every device, and each page's time in ms. */
export async function walkDevices(address: string, apiKey: string, limit?: number): Promise<{ devices: ListedDevice[]; pages: number[]; total: number }> {
  const pages: number[] = [];
  const devices: ListedDevice[] = [];
  let cursor: string | undefined;
  const started = performance.now();
  do {
    const query = new URLSearchParams({ ...(limit && { limit: String(limit) }), ...(cursor && { cursor }) });
    const pageStarted = performance.now();
    const res = await fetch(`${address}/api/v1/devices?${query}`, { headers: { 'x-api-key': apiKey } });
    if (res.status !== 200) throw new Error(`GET /api/v1/devices?${query}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: ListedDevice[]; next_cursor?: string };
    pages.push(performance.now() - pageStarted);
    devices.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return { devices, pages, total: performance.now() - started };
}
