import { describe, expect, it } from 'vitest';
import { availabilityWindows, isDeviceAvailable, isStreamClosed, isStreamSilent, offerValidUntil, streamSilenceLimitMs } from './device-availability.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const config = { DEVICE_AVAILABLE_SECONDS: 1200, DEVICE_HEARTBEAT_SECONDS: 15, DEVICE_STREAM_GRACE_SECONDS: 30 };
const windows = availabilityWindows(config, NOW);
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);

describe('isDeviceAvailable', () => {
  it('counts a stream seen within keepalive + grace, and not after', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: ago(44), streamClosedAt: null }, windows)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(46), streamSeenAt: ago(46), streamClosedAt: null }, windows)).toBe(false);
  });

  it('judges a device that held no stream within the window by its last request', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(1199), streamSeenAt: null, streamClosedAt: null }, windows)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(1201), streamSeenAt: null, streamClosedAt: null }, windows)).toBe(false);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(10), streamSeenAt: ago(3600), streamClosedAt: null }, windows)).toBe(true);
  });

  it('does not count the requests of a device whose stream died lately (it streams, so its stream tells)', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(10), streamSeenAt: ago(60), streamClosedAt: null }, windows)).toBe(false);
  });

  it('counts a closed stream for the grace from its close, not keepalive + grace from its last refresh', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(29), streamSeenAt: ago(29), streamClosedAt: ago(29) }, windows)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(31), streamSeenAt: ago(35), streamClosedAt: ago(31) }, windows)).toBe(false);
  });

  it('does not count the recent requests of a device whose stream closed past the grace', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(5), streamSeenAt: ago(40), streamClosedAt: ago(40) }, windows)).toBe(false);
  });

  it('counts a stream refreshed after a close (held on another API process) as held', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: ago(40), streamSeenAt: ago(10), streamClosedAt: ago(40) }, windows)).toBe(true);
    expect(isStreamClosed({ streamSeenAt: ago(10), streamClosedAt: ago(40) })).toBe(false);
  });

  it('keeps a closed stream within the grace for a keepalive when keepalives are the longer', () => {
    const slow = availabilityWindows({ ...config, DEVICE_HEARTBEAT_SECONDS: 60 }, NOW);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: ago(50), streamClosedAt: ago(50) }, slow)).toBe(true);
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: ago(61), streamClosedAt: ago(61) }, slow)).toBe(false);
  });

  it('never counts registration alone, nor a disabled device', () => {
    expect(isDeviceAvailable({ enabled: true, lastSeenAt: null, streamSeenAt: null, streamClosedAt: null }, windows)).toBe(false);
    expect(isDeviceAvailable({ enabled: false, lastSeenAt: ago(1), streamSeenAt: ago(1), streamClosedAt: null }, windows)).toBe(false);
  });
});

describe('a stream whose device fell silent', () => {
  const limit = 60_000;

  it('leaves the grace and a keepalive before the offline timer, and at least half of it', () => {
    expect(streamSilenceLimitMs({ DEVICE_OFFLINE_AFTER_SECONDS: 120, DEVICE_STREAM_GRACE_SECONDS: 30 }, 15_000)).toBe(75_000);
    expect(streamSilenceLimitMs({ DEVICE_OFFLINE_AFTER_SECONDS: 120, DEVICE_STREAM_GRACE_SECONDS: 100 }, 15_000)).toBe(60_000);
  });

  it('is dead once a device that reports sent nothing for the limit', () => {
    expect(isStreamSilent({ openedAt: ago(300), reportedAt: ago(61) }, NOW, limit)).toBe(true);
    expect(isStreamSilent({ openedAt: ago(300), reportedAt: ago(59) }, NOW, limit)).toBe(false);
  });

  it('counts the opening of the stream as a sign of life', () => {
    expect(isStreamSilent({ openedAt: ago(30), reportedAt: ago(80) }, NOW, limit)).toBe(false);
    expect(isStreamSilent({ openedAt: ago(61), reportedAt: ago(80) }, NOW, limit)).toBe(true);
  });

  it('never judges a device that does not report, or stopped reporting before the stream opened', () => {
    expect(isStreamSilent({ openedAt: ago(3600), reportedAt: null }, NOW, limit)).toBe(false);
    expect(isStreamSilent({ openedAt: ago(3600), reportedAt: ago(3661) }, NOW, limit)).toBe(false);
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
