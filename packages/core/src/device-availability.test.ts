import { describe, expect, it } from 'vitest';
import { availabilityWindows, isDeviceAvailable, offerValidUntil } from './device-availability.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const config = { DEVICE_AVAILABLE_SECONDS: 1200, DEVICE_HEARTBEAT_SECONDS: 15, DEVICE_STREAM_GRACE_SECONDS: 30 };
const windows = availabilityWindows(config, NOW);
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);

describe('isDeviceAvailable', () => {
  it('counts a stream seen within keepalive + grace, and not after', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: ago(44) }, windows)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(46), streamSeenAt: ago(46) }, windows)).toBe(false);
  });

  it('judges a device that held no stream within the window by its last request', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(1199), streamSeenAt: null }, windows)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(1201), streamSeenAt: null }, windows)).toBe(false);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(10), streamSeenAt: ago(3600) }, windows)).toBe(true);
  });

  it('does not count the requests of a device whose stream died lately (it streams, so its stream tells)', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(10), streamSeenAt: ago(60) }, windows)).toBe(false);
  });

  it('never counts registration alone, nor a disabled device', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: null }, windows)).toBe(false);
    expect(isDeviceAvailable({ enabled: false, lastSeenAt: ago(1), streamSeenAt: ago(1) }, windows)).toBe(false);
  });
});

describe('offerValidUntil', () => {
  const leases = { SENDING_LEASE_SECONDS: 3600, MESSAGE_TTL_SECONDS: 86400 };

  it('is the sending lease from the first offer', () => {
    expect(offerValidUntil({ offeredAt: ago(0), createdAt: ago(60) }, leases)).toEqual(new Date(NOW.getTime() + 3600_000));
  });

  it('is the end of the time to live when that comes first', () => {
    expect(offerValidUntil({ offeredAt: ago(0), createdAt: ago(86400 - 600) }, leases)).toEqual(new Date(NOW.getTime() + 600_000));
  });
});
