/**
 * When a device may be given messages, and until when a message handed to it is worth sending
 * (docs/devices.md, "Availability" and "Delivery"). The dispatcher's SQL (packages/db,
 * `availableDeviceCondition`) states the same rule; a test holds the two together.
 */
export interface DeviceLiveness {
  enabled: boolean;
  /** The last device request; registration does not count. */
  lastSeenAt: Date | null;
  /** Refreshed while the device holds an event stream: when it opens and on every keepalive. */
  streamSeenAt: Date | null;
  /** When its last stream closed (or was found dead); closed while not older than `streamSeenAt`. */
  streamClosedAt: Date | null;
}

export interface AvailabilityWindows {
  /** A held stream (no close since) seen since then is held now: an API that crashed sends no close. */
  streamSince: Date;
  /** A stream that closed since then is within the grace. */
  closedSince: Date;
  /** A device that held no stream since then is judged by its last request since then. */
  requestSince: Date;
}

export function availabilityWindows(
  config: { DEVICE_AVAILABLE_SECONDS: number; DEVICE_HEARTBEAT_SECONDS: number; DEVICE_STREAM_GRACE_SECONDS: number },
  now: Date,
): AvailabilityWindows {
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  return {
    streamSince: ago(config.DEVICE_HEARTBEAT_SECONDS + config.DEVICE_STREAM_GRACE_SECONDS),
    // A close on one API process is undone by the next keepalive of a stream the device holds on
    // another: the grace must last that long, or such a device would drop out in between.
    closedSince: ago(Math.max(config.DEVICE_STREAM_GRACE_SECONDS, config.DEVICE_HEARTBEAT_SECONDS)),
    requestSince: ago(config.DEVICE_AVAILABLE_SECONDS),
  };
}

/** The stream's last close is not older than its last refresh: no stream is held since. */
export function isStreamClosed(device: Pick<DeviceLiveness, 'streamSeenAt' | 'streamClosedAt'>): boolean {
  return device.streamClosedAt !== null && device.streamSeenAt !== null && device.streamClosedAt >= device.streamSeenAt;
}

/** It holds a stream (refreshed within keepalive + grace), or its stream closed within the grace. */
function streamCounts(device: DeviceLiveness, windows: AvailabilityWindows): boolean {
  if (device.streamSeenAt === null) return false;
  return isStreamClosed(device) ? device.streamClosedAt! >= windows.closedSince : device.streamSeenAt >= windows.streamSince;
}

/**
 * Enabled and connected: it holds an event stream (or closed it within the grace), or, when it
 * held no stream within the request window, it made a request within that window. A device that
 * streams and died is therefore unavailable after the grace, whatever its last request.
 */
export function isDeviceAvailable(device: DeviceLiveness, windows: AvailabilityWindows): boolean {
  if (!device.enabled) return false;
  if (streamCounts(device, windows)) return true;
  const { streamSeenAt, lastSeenAt } = device;
  const streamedLately = streamSeenAt !== null && streamSeenAt >= windows.requestSince;
  return !streamedLately && lastSeenAt !== null && lastSeenAt >= windows.requestSince;
}

/** real-devices.md §2b.2: a phone that registered with Google push never opens the event stream. */
export const PUSH_TOKEN_WARNING =
  'Registered with Google push: it opens no event stream and polls every 15 minutes, so messages go out late. In the SMS Gate app choose "SSE only" and restart the app.';

export interface DeviceConnection {
  available: boolean;
  /** How it is connected now: an event stream, only requests (polling), or not at all. */
  connection: 'stream' | 'requests' | null;
  /** What keeps the device from working well, in words. */
  warnings: string[];
}

/** What the device record (API, CLI, console) says of a device's connection. */
export function deviceConnection(device: DeviceLiveness & { pushToken: boolean }, windows: AvailabilityWindows): DeviceConnection {
  const streaming = streamCounts(device, windows);
  const connected = isDeviceAvailable({ ...device, enabled: true }, windows);
  return {
    available: device.enabled && connected,
    connection: streaming ? 'stream' : connected ? 'requests' : null,
    warnings: device.pushToken ? [PUSH_TOKEN_WARNING] : [],
  };
}

/**
 * The moment smsgw stops waiting for a message handed to a device: the sending lease from its
 * first offer, the end of its time to live (from its `send_at` when scheduled) or its own
 * `valid_until`, whichever is first. The same on every offer, so a phone that is told it
 * (`validUntil`) fails the message itself rather than send it late.
 */
export function offerValidUntil(
  message: { offeredAt: Date; createdAt: Date; sendAt?: Date | null; validUntil?: Date | null },
  config: { SENDING_LEASE_SECONDS: number; MESSAGE_TTL_SECONDS: number },
): Date {
  const start = message.sendAt ?? message.createdAt;
  return new Date(
    Math.min(
      message.offeredAt.getTime() + config.SENDING_LEASE_SECONDS * 1000,
      start.getTime() + config.MESSAGE_TTL_SECONDS * 1000,
      message.validUntil?.getTime() ?? Infinity,
    ),
  );
}

/**
 * A stream into a phone that left coverage stays open on the API's side: no FIN arrives and its
 * keepalives are accepted by the kernel for many minutes. A device that reports its health
 * (native heartbeat, SMS Gate `system:ping`) shows it is alive; once it reported lately and then
 * falls silent for this long, its stream is taken as dead. The limit leaves the grace and one
 * keepalive before `DEVICE_OFFLINE_AFTER_SECONDS`, so the device is unavailable within that, and
 * is at least half of it: the app pings every half, and one ping that is on time never cuts.
 */
export function streamSilenceLimitMs(config: { DEVICE_OFFLINE_AFTER_SECONDS: number; DEVICE_STREAM_GRACE_SECONDS: number }, keepaliveMs: number): number {
  const offlineMs = config.DEVICE_OFFLINE_AFTER_SECONDS * 1000;
  return Math.max(offlineMs - config.DEVICE_STREAM_GRACE_SECONDS * 1000 - keepaliveMs, offlineMs / 2);
}

/**
 * Whether a stream opened at `openedAt` is dead by the silence of its device: the device reported
 * within the limit before the stream opened or since (a device that never reports, or stopped long
 * ago, is not judged so), and nothing came for the limit since its last report or the opening,
 * whichever is later.
 */
export function isStreamSilent(stream: { openedAt: Date; reportedAt: Date | null }, now: Date, limitMs: number): boolean {
  const { openedAt, reportedAt } = stream;
  if (reportedAt === null || reportedAt.getTime() < openedAt.getTime() - limitMs) return false;
  return now.getTime() - Math.max(reportedAt.getTime(), openedAt.getTime()) >= limitMs;
}
