import { describe, expect, it } from 'vitest';
import { announcedHealth, deviceHealth, healthContext, networkState, pingIntervalSeconds, type DeviceHealth, type HealthFields } from './device-health.ts';
import { isDeviceAvailable, type AvailabilityWindows } from './device-availability.ts';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
const WINDOWS: AvailabilityWindows = { streamSince: ago(45), closedSince: ago(30), requestSince: ago(1200) };

function device(overrides: Partial<HealthFields> = {}): HealthFields {
  return {
    enabled: true,
    lastSeenAt: ago(5),
    streamSeenAt: ago(5),
    streamClosedAt: null,
    pushToken: false,
    appVersion: null,
    failuresInARow: 0,
    batteryLevel: null,
    batteryCharging: null,
    signalDbm: null,
    network: null,
    ...overrides,
  };
}

describe('deviceHealth', () => {
  it('is online exactly when the availability rule says available, offline otherwise', () => {
    const cases = [
      device(),
      device({ streamSeenAt: ago(100), lastSeenAt: ago(100) }),
      device({ streamSeenAt: null, lastSeenAt: ago(600) }),
      device({ enabled: false }),
    ];
    for (const d of cases) expect(deviceHealth(d, WINDOWS).status === 'offline').toBe(!isDeviceAvailable(d, WINDOWS));
  });

  it('is offline once silent for the offline timer, even while a polling device still counts as available', () => {
    const poller = device({ streamSeenAt: null, lastSeenAt: ago(130) });
    expect(isDeviceAvailable(poller, WINDOWS)).toBe(true);
    expect(deviceHealth(poller, WINDOWS)).toMatchObject({ status: 'online', connection: 'poll' });
    expect(deviceHealth(poller, WINDOWS, healthContext({ DEVICE_OFFLINE_AFTER_SECONDS: 120 }, NOW))).toMatchObject({
      status: 'offline',
      reasons: ['not_connected'],
      connection: null,
    });
    expect(deviceHealth(poller, WINDOWS, healthContext({ DEVICE_OFFLINE_AFTER_SECONDS: 140 }, NOW)).status).toBe('online');
  });

  it('names each degraded reason, and none while offline', () => {
    const sick = device({ batteryLevel: 20, batteryCharging: false, network: 'denied', pushToken: true, failuresInARow: 3 });
    expect(deviceHealth(sick, WINDOWS, { budgetExhausted: true })).toMatchObject({
      status: 'degraded',
      reasons: ['low_battery', 'no_service', 'polling_only', 'send_failures', 'budget_exhausted'],
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
      connection: 'poll',
      battery: { level: null, charging: true },
    });
    expect(deviceHealth(device({ signalDbm: -90 }), WINDOWS).signal).toEqual({ dbm: -90, network: null });
  });
});

describe('announcedHealth', () => {
  const OPTIONS = { now: NOW, offlineAfterMs: 120_000, dwellMs: 300_000 };
  const health = (status: DeviceHealth['status'], seenSecondsAgo: number, reasons: DeviceHealth['reasons'] = []): DeviceHealth => ({
    status,
    reasons,
    last_seen_at: ago(seenSecondsAgo).toISOString(),
    connection: null,
    app_version: null,
    battery: null,
    signal: null,
  });
  const was = (status: DeviceHealth['status'] | null, changedSecondsAgo: number | null, reasons: string[] = []) => ({
    status,
    reasons,
    changedAt: changedSecondsAgo === null ? null : ago(changedSecondsAgo),
  });
  const status = (announcement: ReturnType<typeof announcedHealth>) =>
    announcement && (announcement.event ? announcement.status : `${announcement.status}, no event`);

  it('announces offline only after the offline timer, however soon the availability lapses', () => {
    expect(announcedHealth(health('offline', 119), was('online', 3600), OPTIONS)).toBeUndefined();
    expect(announcedHealth(health('offline', 120, ['not_connected']), was('online', 3600), OPTIONS)).toEqual({
      status: 'offline',
      reasons: ['not_connected'],
      event: true,
    });
    expect(announcedHealth(health('offline', 120, ['not_connected']), was('offline', 3600, ['not_connected']), OPTIONS)).toBeUndefined();
  });

  it('announces the return from offline at once, and online-degraded changes at most once per dwell', () => {
    expect(status(announcedHealth(health('online', 1), was('offline', 1), OPTIONS))).toBe('online');
    expect(announcedHealth(health('degraded', 1, ['low_battery']), was('online', 299), OPTIONS)).toBeUndefined();
    expect(status(announcedHealth(health('degraded', 1, ['low_battery']), was('online', 300), OPTIONS))).toBe('degraded');
    expect(status(announcedHealth(health('offline', 200), was('degraded', 10), OPTIONS))).toBe('offline');
  });

  it('records a device’s first status without an event, whatever the dwell', () => {
    expect(status(announcedHealth(health('online', 1), was(null, null), OPTIONS))).toBe('online, no event');
    expect(status(announcedHealth(health('offline', 60), was(null, null), OPTIONS))).toBe('offline, no event');
    expect(status(announcedHealth(health('degraded', 1, ['low_battery']), was(null, null), OPTIONS))).toBe('degraded, no event');
  });

  it.each(['quarantined', 'limit_exceeded'] as const)(
    'announces %s at once: within the dwell, on a device degraded already, and on its first judgement',
    (pause) => {
      expect(announcedHealth(health('degraded', 1, ['send_failures', pause]), was('online', 1), OPTIONS)).toEqual({
        status: 'degraded',
        reasons: ['send_failures', pause],
        event: true,
      });
      expect(status(announcedHealth(health('degraded', 1, ['polling_only', pause]), was('degraded', 1, ['polling_only']), OPTIONS))).toBe('degraded');
      expect(status(announcedHealth(health('degraded', 1, [pause]), was(null, null), OPTIONS))).toBe('degraded');
      // Once announced, the same pause is not news again, and its end waits out the dwell as any return to online.
      expect(announcedHealth(health('degraded', 1, [pause]), was('degraded', 1, [pause]), OPTIONS)).toBeUndefined();
      expect(announcedHealth(health('online', 1), was('degraded', 60, [pause]), OPTIONS)).toBeUndefined();
    },
  );

  it('records new reasons of an unchanged status without an event, so that a pause that ends and begins again is news again', () => {
    expect(announcedHealth(health('degraded', 1, ['polling_only']), was('degraded', 1, ['polling_only', 'quarantined']), OPTIONS)).toEqual({
      status: 'degraded',
      reasons: ['polling_only'],
      event: false,
    });
    expect(status(announcedHealth(health('degraded', 1, ['polling_only', 'quarantined']), was('degraded', 1, ['polling_only']), OPTIONS))).toBe('degraded');
    // A reading's reason is no news of its own: it waits for a change of status.
    expect(status(announcedHealth(health('degraded', 1, ['polling_only', 'low_battery']), was('degraded', 1, ['polling_only']), OPTIONS))).toBe(
      'degraded, no event',
    );
  });
});

describe('network labels and the ping interval', () => {
  it('keeps a known network label and takes any other for unknown', () => {
    expect(['registered', 'no_sim', 'LTE', 'Registered', '', null].map(networkState)).toEqual(['registered', 'no_sim', null, null, null, null]);
  });
  it('asks for a ping twice within the offline timer', () => {
    expect([120, 11, 10].map(pingIntervalSeconds)).toEqual([60, 5, 5]);
  });
});
