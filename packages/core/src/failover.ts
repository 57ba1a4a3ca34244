/**
 * Failover without double sends (docs/devices.md, "Failover"; decisions.md, "Failover"): which
 * failures may go to another device, which devices a retry may use, and how long a device that
 * keeps failing is kept out of round-robin. Pure rules; the dispatcher feeds them.
 */

/**
 * Whether a retryable failure's error says Android's sending limit refused the message: the SMS
 * Gate app's text (routes/device-protocols/sms-gate, send-results.ts), or any device's error
 * naming `LIMIT_EXCEEDED` (docs/devices.md, "Failover").
 */
export function isLimitExceeded(error: string | undefined | null): boolean {
  return /LIMIT_EXCEEDED/.test(error ?? '');
}

/** One device's try at a message, as the record lists it. */
export interface SendAttempt {
  device_id: string;
  error: string | null;
  at: string;
}

/** The first quarantine lasts this long; each following one (no send in between) twice as long. */
export const QUARANTINE_FIRST_MS = 60_000;
/** The longest quarantine: a device that never recovers is still tried once an hour. */
export const QUARANTINE_MAX_MS = 3_600_000;

/** The cool-down of a device's quarantine, `previous` being its quarantines since it last sent a message. */
export function quarantineCooldownMs(previous: number): number {
  return Math.min(QUARANTINE_MAX_MS, QUARANTINE_FIRST_MS * 2 ** Math.min(previous, 20));
}

/** Why a device is out of round-robin for a while. */
export type PauseReason = 'quarantined' | 'limit_exceeded';

/** Whether a device paused until `pausedUntil` is still out of round-robin at `now`. */
export function isPaused(pausedUntil: Date | null | undefined, now: Date): boolean {
  return pausedUntil !== null && pausedUntil !== undefined && pausedUntil.getTime() > now.getTime();
}

/** A device's failover counters, as the failure statement left them. */
export interface FailoverCounters {
  id: string;
  retryableFailuresInARow: number;
  quarantines: number;
  pausedUntil: Date | null;
}

/**
 * The devices to quarantine now, with the end of each cool-down: those with at least `threshold`
 * retryable failures in a row that are not paused already. Until it sends a message again a device
 * keeps its count, so the first failure after a cool-down quarantines it again, for twice as long.
 */
export function quarantinesDue(
  devices: readonly FailoverCounters[],
  options: { threshold: number; now: Date },
): { id: string; quarantines: number; until: Date }[] {
  return devices
    .filter((d) => d.retryableFailuresInARow >= options.threshold && !isPaused(d.pausedUntil, options.now))
    .map((d) => ({ id: d.id, quarantines: d.quarantines, until: new Date(options.now.getTime() + quarantineCooldownMs(d.quarantines)) }));
}
