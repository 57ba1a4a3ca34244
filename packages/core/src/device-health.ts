import { isPaused } from './failover.ts';
import { deviceConnection, type AvailabilityWindows, type DeviceLiveness } from './device-availability.ts';

/**
 * The health of a device (docs/devices.md, "Health"): `online` and `degraded` only when available,
 * `degraded` being online with something that keeps it from working well; `offline` when not
 * available, or silent for the offline timer (`HealthContext.silentSince`).
 */
export const HEALTH_STATUSES = ['online', 'degraded', 'offline'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** How a device may say it reaches the mobile network (native heartbeat `network`). */
export const NETWORK_STATES = ['registered', 'roaming', 'searching', 'denied', 'none', 'no_sim'] as const;
export type NetworkState = (typeof NETWORK_STATES)[number];
const NO_SERVICE: readonly NetworkState[] = ['searching', 'denied', 'none', 'no_sim'];

/**
 * A device's network label in the record's vocabulary: one of NETWORK_STATES, anything else
 * (`LTE`, a state a newer device knows) unknown, null, as a device that does not know says it.
 */
export function networkState(label: string | null): NetworkState | null {
  return (NETWORK_STATES as readonly (string | null)[]).includes(label) ? (label as NetworkState) : null;
}

/** Battery at or below this, not charging, is `low_battery`: Android's own "low battery" warning is at 15 %, this leaves time to act. */
export const LOW_BATTERY_PERCENT = 20;
/** This many send failures in a row is `send_failures`: one failure is the recipient's, three in a row are the device's. */
export const FAILURES_IN_A_ROW_DEGRADED = 3;

/** Why a device is degraded or offline, as stable codes (docs/devices.md, "Health"). */
export const HEALTH_REASONS = [
  'disabled',
  'not_connected',
  'low_battery',
  'no_service',
  'polling_only',
  'send_failures',
  'budget_exhausted',
  'quarantined',
  'limit_exceeded',
] as const;
export type HealthReason = (typeof HEALTH_REASONS)[number];
/**
 * Reasons that are smsgw's own decisions (failover's pauses), not a device's readings: they cannot
 * flap, since the decision holds for its whole pause, and they say that round-robin already left
 * the device, so each is announced as soon as it begins, whatever the dwell or other reasons.
 */
export const REASONS_ANNOUNCED_AT_ONCE: readonly HealthReason[] = ['quarantined', 'limit_exceeded'];

/** What a device last reported of itself (native heartbeat body, SMS Gate `system:ping`). */
export interface HealthReport {
  batteryLevel: number | null;
  batteryCharging: boolean | null;
  signalDbm: number | null;
  network: string | null;
}

export interface HealthFields extends DeviceLiveness, HealthReport {
  pushToken: boolean;
  appVersion: string | null;
  failuresInARow: number;
  /** Failover: out of round-robin until then (absent: never paused), and why (`quarantined` or `limit_exceeded`). */
  pausedUntil?: Date | null;
  pauseReason?: string | null;
}

/** What other parts of smsgw know of a device that the device row does not hold. */
export interface HealthContext {
  /**
   * A device with no sign of life since then is offline, even while the availability rule still
   * counts a polling device (DEVICE_OFFLINE_AFTER_SECONDS ago: the alerts' timer).
   */
  silentSince?: Date;
  /** Carrier budgets (issue 18, item 4): no room left in any of the device's windows. */
  budgetExhausted?: boolean;
  /** The moment of judgement: a device paused (failover) until later is degraded. */
  now?: Date;
}

/** The context of every device record: the offline timer of DEVICE_OFFLINE_AFTER_SECONDS at `now`. */
export function healthContext(config: { DEVICE_OFFLINE_AFTER_SECONDS: number }, now: Date): HealthContext {
  return { silentSince: new Date(now.getTime() - config.DEVICE_OFFLINE_AFTER_SECONDS * 1000), now };
}

export interface DeviceHealth {
  status: HealthStatus;
  reasons: HealthReason[];
  last_seen_at: string | null;
  connection: 'stream' | 'poll' | null;
  app_version: string | null;
  battery: { level: number | null; charging: boolean | null } | null;
  signal: { dbm: number | null; network: string | null } | null;
}

export function deviceHealth(device: HealthFields, windows: AvailabilityWindows, context: HealthContext = {}): DeviceHealth {
  const connected = deviceConnection(device, windows);
  const silent = context.silentSince !== undefined && (device.lastSeenAt === null || device.lastSeenAt <= context.silentSince);
  const available = connected.available && !silent;
  const connection = silent ? null : connected.connection;
  const reasons: HealthReason[] = [];
  if (!device.enabled) reasons.push('disabled');
  else if (!available) reasons.push('not_connected');
  else {
    if (device.batteryLevel !== null && device.batteryLevel <= LOW_BATTERY_PERCENT && device.batteryCharging === false) reasons.push('low_battery');
    if (device.network !== null && (NO_SERVICE as readonly string[]).includes(device.network)) reasons.push('no_service');
    if (device.pushToken) reasons.push('polling_only');
    if (device.failuresInARow >= FAILURES_IN_A_ROW_DEGRADED) reasons.push('send_failures');
    if (context.budgetExhausted) reasons.push('budget_exhausted');
    if (context.now && isPaused(device.pausedUntil, context.now)) reasons.push(device.pauseReason === 'limit_exceeded' ? 'limit_exceeded' : 'quarantined');
  }
  const hasBattery = device.batteryLevel !== null || device.batteryCharging !== null;
  const hasSignal = device.signalDbm !== null || device.network !== null;
  return {
    status: !available ? 'offline' : reasons.length > 0 ? 'degraded' : 'online',
    reasons,
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    connection: connection === 'requests' ? 'poll' : connection,
    app_version: device.appVersion,
    battery: hasBattery ? { level: device.batteryLevel, charging: device.batteryCharging } : null,
    signal: hasSignal ? { dbm: device.signalDbm, network: device.network } : null,
  };
}

/**
 * How often an SMS Gate phone is asked to ping (settings `ping.interval_seconds`): twice within the
 * offline timer, so that one lost ping does not announce a phone offline.
 */
export function pingIntervalSeconds(offlineAfterSeconds: number): number {
  return Math.max(5, Math.floor(offlineAfterSeconds / 2));
}

/** What was last announced of a device (`devices.health_status`, `health_reasons`, `health_changed_at`); status null: never judged. */
export interface AnnouncedHealth {
  status: HealthStatus | null;
  reasons: readonly string[];
  changedAt: Date | null;
}

/** What the sweep records of a device: its status and reasons, and whether a webhook event announces them. */
export interface HealthAnnouncement {
  status: HealthStatus;
  reasons: HealthReason[];
  event: boolean;
}

/**
 * What to announce of a device (docs/devices.md, "Alerts"), from its health and the last
 * announcement. Offline is announced once the device gave no sign of life for `offlineAfterMs`
 * (its own timer, apart from the routing grace); while it is silent for less, the last
 * announcement stands. Between online and degraded a change is announced only after the last one
 * stood `dwellMs`, so a battery at the threshold does not flap; leaving offline is announced at
 * once, and so is a reason of REASONS_ANNOUNCED_AT_ONCE the last announcement did not carry (also
 * when the device was degraded already, or is judged for the first time). A device's first status
 * is recorded without an event; so are new reasons of an unchanged status, so that a pause that
 * ends and begins again is news again. Undefined: nothing to record.
 */
export function announcedHealth(
  health: DeviceHealth,
  previous: AnnouncedHealth,
  options: { now: Date; offlineAfterMs: number; dwellMs: number },
): HealthAnnouncement | undefined {
  const seen = health.last_seen_at === null ? 0 : Date.parse(health.last_seen_at);
  const silent = options.now.getTime() - seen >= options.offlineAfterMs;
  const next = silent ? 'offline' : health.status === 'offline' ? (previous.status ?? 'offline') : health.status;
  const news = next === 'degraded' && health.reasons.some((r) => REASONS_ANNOUNCED_AT_ONCE.includes(r) && !previous.reasons.includes(r));
  const record = (event: boolean): HealthAnnouncement => ({ status: next, reasons: health.reasons, event });
  if (news) return record(true);
  if (previous.status === null) return record(false);
  if (next === previous.status) {
    const same = health.reasons.length === previous.reasons.length && health.reasons.every((r) => previous.reasons.includes(r));
    return same || next !== health.status ? undefined : record(false);
  }
  const stood = previous.changedAt === null ? Infinity : options.now.getTime() - previous.changedAt.getTime();
  if (next !== 'offline' && previous.status !== 'offline' && stood < options.dwellMs) return undefined;
  return record(true);
}
