/**
 * The modem's network health through the agent: AT+CSQ, AT+CREG? and the SIM state of the fake
 * modem reach the device's `health` on the real API through the native heartbeat.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '@smsgw/api/testing';
import { startHarness, startWorld, type Harness, type World } from './testing/harness.ts';

let world: World;
let h: Harness | undefined;
beforeAll(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});
afterAll(async () => {
  await world?.close();
});

async function health(harness: Harness) {
  const res = await call(harness.api.app, harness.user.apiKey, 'GET', `/api/v1/devices/${harness.user.deviceId}`);
  expect(res.statusCode).toBe(200);
  return res.json().health;
}

describe('modem agent: network health', () => {
  it('reports the signal and registration it reads from the modem, and no service when the SIM is gone', async () => {
    h = await startHarness(world);
    h.startAgent();
    await vi.waitFor(async () => expect(await health(h!)).toMatchObject({ status: 'online', signal: { dbm: -71, network: 'registered' }, battery: null }), {
      timeout: 10_000,
    });
    expect(h.modem.commands).toEqual(expect.arrayContaining(['AT+CSQ', 'AT+CREG?']));

    h.modem.rssi = 5;
    h.modem.registration = 5;
    await vi.waitFor(async () => expect((await health(h!)).signal).toEqual({ dbm: -103, network: 'roaming' }), { timeout: 10_000 });

    h.modem.registration = 2;
    await vi.waitFor(async () => expect(await health(h!)).toMatchObject({ status: 'degraded', reasons: ['no_service'], signal: { network: 'searching' } }), {
      timeout: 10_000,
    });

    h.modem.registration = 1;
    h.modem.noSim = true;
    await vi.waitFor(
      async () => expect(await health(h!)).toMatchObject({ status: 'degraded', reasons: ['no_service'], signal: { dbm: -103, network: 'no_sim' } }),
      {
        timeout: 10_000,
      },
    );
  });

  it('reports an unknown signal (RSSI 99) as null', async () => {
    h = await startHarness(world);
    h.modem.rssi = 99;
    h.startAgent();
    await vi.waitFor(async () => expect((await health(h!)).signal).toEqual({ dbm: null, network: 'registered' }), { timeout: 10_000 });
  });
});
