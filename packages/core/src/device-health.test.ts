import { describe, expect, it } from 'vitest';
import { announcedHealth, cregToNetwork, csqToDbm, deviceHealth, healthContext, pingIntervalSeconds, type DeviceHealth, type HealthFields } from './device-health.ts';
import { isDeviceAvailable, type AvailabilityWindows } from './device-availability.ts';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
const WINDOWS: AvailabilityWindows = { streamSince: ago(45), closedSince: ago(30), requestSince: ago(1200) };

function device(overrides: Partial<HealthFields> = {}): HealthFields {
  return {
    enabled: true, lastSeenAt: ago(5), streamSeenAt: ago(5), streamClosedAt: null, pushToken: false, appVersion: null, failuresInARow: 0,
    batteryLevel: null, batteryCharging: null, signalDbm: null, network: null, ...overrides,
  };
}

describe('deviceHealth', () => {
  it('is online exactly when the availability rule says available, offline otherwise', () => {
    const cases = [device(), device({ streamSeenAt: ago(100), lastSeenAt: ago(100) }), device({ streamSeenAt: null, lastSeenAt: ago(600) }), device({ enabled: false })];
    for (const d of cases) expect(deviceHealth(d, WINDOWS).status === 'offline').toBe(!isDeviceAvailable(d, WINDOWS));
  });

  it('is offline once silent for the offline timer, even while a polling device still counts as available', () => {
    const poller = device({ streamSeenAt: null, lastSeenAt: ago(130) });
    expect(isDeviceAvailable(poller, WINDOWS)).toBe(true);
    expect(deviceHealth(poller, WINDOWS)).toMatchObject({ status: 'online', connection: 'poll' });
    expect(deviceHealth(poller, WINDOWS, healthContext({ DEVICE_OFFLINE_AFTER_SECONDS: 120 }, NOW))).toMatchObject({
      status: 'offline', reasons: ['not_connected'], connection: null,
    });
    expect(deviceHealth(poller, WINDOWS, healthContext({ DEVICE_OFFLINE_AFTER_SECONDS: 140 }, NOW)).status).toBe('online');
  });

  it('names each degraded reason, and none while offline', () => {
    const sick = device({ batteryLevel: 20, batteryCharging: false, network: 'denied', pushToken: true, failuresInARow: 3 });
    expect(deviceHealth(sick, WINDOWS, { budgetExhausted: true })).toMatchObject({
      status: 'degraded', reasons: ['low_battery', 'no_service', 'polling_only', 'send_failures', 'budget_exhausted'],
    });
    expect(deviceHealth({ ...sick, streamSeenAt: ago(100), lastSeenAt: ago(100) }, WINDOWS).reasons).toEqual(['not_connected']);
    expect(deviceHealth({ ...sick, enabled: false }, WINDOWS).reasons).toEqual(['disabled']);
  });

  it('does not count a low battery that charges, or one whose charging is unknown, nor two failures', () => {
    expect(deviceHealth(device({ batteryLevel: 5, batteryCharging: true }), WINDOWS).status).toBe('online');
    expect(deviceHealth(device({ batteryLevel: 5 }), WINDOWS).status).toBe('online');
    expect(deviceHealth(device({ batteryLevel: 21, batteryCharging: false }), WINDOWS).status).toBe('online');
    expect(deviceHealth(device({ failuresInARow: 2 }), WINDOWS).status).toBe('online');
    expect(deviceHealth(device({ network: 'roaming' }), WINDOWS).status).toBe('online');
  });

  it('shows the connection as stream, poll or null, and battery and signal only when reported', () => {
    expect(deviceHealth(device(), WINDOWS)).toMatchObject({ connection: 'stream', battery: null, signal: null });
    expect(deviceHealth(device({ streamSeenAt: null, batteryCharging: true }), WINDOWS)).toMatchObject({
      connection: 'poll', battery: { level: null, charging: true },
    });
    expect(deviceHealth(device({ signalDbm: -90 }), WINDOWS).signal).toEqual({ dbm: -90, network: null });
  });
});

describe('announcedHealth', () => {
  const OPTIONS = { now: NOW, offlineAfterMs: 120_000, dwellMs: 300_000 };
  const health = (status: DeviceHealth['status'], seenSecondsAgo: number): DeviceHealth => ({
    status, reasons: [], last_seen_at: ago(seenSecondsAgo).toISOString(), connection: null, app_version: null, battery: null, signal: null,
  });

  it('announces offline only after the offline timer, however soon the availability lapses', () => {
    expect(announcedHealth(health('offline', 119), { status: 'online', changedAt: ago(3600) }, OPTIONS)).toBeUndefined();
    expect(announcedHealth(health('offline', 120), { status: 'online', changedAt: ago(3600) }, OPTIONS)).toBe('offline');
    expect(announcedHealth(health('offline', 120), { status: 'offline', changedAt: ago(3600) }, OPTIONS)).toBeUndefined();
  });

  it('announces the return from offline at once, and online-degraded changes at most once per dwell', () => {
    expect(announcedHealth(health('online', 1), { status: 'offline', changedAt: ago(1) }, OPTIONS)).toBe('online');
    expect(announcedHealth(health('degraded', 1), { status: 'online', changedAt: ago(299) }, OPTIONS)).toBeUndefined();
    expect(announcedHealth(health('degraded', 1), { status: 'online', changedAt: ago(300) }, OPTIONS)).toBe('degraded');
    expect(announcedHealth(health('offline', 200), { status: 'degraded', changedAt: ago(10) }, OPTIONS)).toBe('offline');
  });

  it('gives a device its first status whatever the dwell', () => {
    expect(announcedHealth(health('online', 1), { status: null, changedAt: null }, OPTIONS)).toBe('online');
    expect(announcedHealth(health('offline', 60), { status: null, changedAt: null }, OPTIONS)).toBe('offline');
  });
});

describe('modem readings and the ping interval', () => {
  it('turns AT+CSQ RSSI into dBm, 99 and out of range into null', () => {
    expect([0, 15, 31, 99, 32, -1].map(csqToDbm)).toEqual([-113, -83, -51, null, null, null]);
  });
  it('turns AT+CREG? status into a network state', () => {
    expect([0, 1, 2, 3, 4, 5].map(cregToNetwork)).toEqual(['none', 'registered', 'searching', 'denied', null, 'roaming']);
  });
  it('asks for a ping twice within the offline timer', () => {
    expect([120, 11, 10].map(pingIntervalSeconds)).toEqual([60, 5, 5]);
  });
});
