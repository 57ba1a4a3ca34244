import { deviceConnection, type AvailabilityWindows } from './device-availability.ts';
import { deviceHealth, type HealthContext, type HealthReport } from './device-health.ts';

/** What a device record is made of: the stored device (packages/db's DeviceRow has these fields). */
export interface DeviceFields extends HealthReport {
  id: string;
  name: string;
  enabled: boolean;
  protocol: 'native' | 'sms_gate';
  lastSeenAt: Date | null;
  streamSeenAt: Date | null;
  appVersion: string | null;
  pushToken: boolean;
  simCards: unknown;
  rateLimitPerMinute: number | null;
  rateLimitPerHour: number | null;
  rateLimitPerDay: number | null;
  failuresInARow: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The device as the API, the CLI and the device webhook events show it (docs/http-api.md,
 * "Devices"), connection and health judged by `windows`.
 */
export function toDeviceRecord(device: DeviceFields, windows: AvailabilityWindows, context: HealthContext = {}) {
  const { available, connection, warnings } = deviceConnection(device, windows);
  return {
    id: device.id,
    name: device.name,
    enabled: device.enabled,
    protocol: device.protocol,
    available,
    connection,
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    app_version: device.appVersion,
    sim_cards: Array.isArray(device.simCards) ? (device.simCards as unknown[]) : null,
    warnings,
    health: deviceHealth(device, windows, context),
    rate_limit_per_minute: device.rateLimitPerMinute,
    rate_limit_per_hour: device.rateLimitPerHour,
    rate_limit_per_day: device.rateLimitPerDay,
    created_at: device.createdAt.toISOString(),
    updated_at: device.updatedAt.toISOString(),
  };
}

export type DeviceRecord = ReturnType<typeof toDeviceRecord>;
