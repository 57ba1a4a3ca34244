/**
 * When a device may be given messages, and until when a message handed to it is worth sending
 * (docs/devices.md, "Availability" and "Delivery"). The dispatcher's SQL (packages/db,
 * `availableDeviceCondition`) states the same rule; a test holds the two together.
 */
export interface DeviceLiveness {
  enabled: boolean;
  /** The last device request; registration does not count. */
  lastSeenAt: Date | null;
  /** Refreshed while the device holds an event stream, and set when the stream closes. */
  streamSeenAt: Date | null;
}

export interface AvailabilityWindows {
  /** A stream seen since then is held now, or closed less than the grace ago. */
  streamSince: Date;
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
    requestSince: ago(config.DEVICE_AVAILABLE_SECONDS),
  };
}

/**
 * Enabled and connected: it holds an event stream (or closed it within the grace), or, when it
 * held no stream within the request window, it made a request within that window. A device that
 * streams and died is therefore unavailable after the grace, whatever its last request.
 */
export function isDeviceAvailable(device: DeviceLiveness, windows: AvailabilityWindows): boolean {
  if (!device.enabled) return false;
  const { streamSeenAt, lastSeenAt } = device;
  if (streamSeenAt && streamSeenAt >= windows.streamSince) return true;
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
  const streaming = device.streamSeenAt !== null && device.streamSeenAt >= windows.streamSince;
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
