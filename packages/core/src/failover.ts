/**
 * Failover without double sends (docs/devices.md, "Failover"; decisions.md, "Failover"): which
 * failures may go to another device, which devices a retry may use, and how long a device that
 * keeps failing is kept out of round-robin. Pure rules; the dispatcher feeds them.
 */

/**
 * The Android `SmsManager` results that the SMS Gate app reports for a message that never left the
 * phone: the radio was off or had no service, Android's own sending limit refused it, no PDU could
 * be made, or fixed dialling (FDN) blocked the number on this SIM. Each is about this phone, not the
 * recipient, so another phone may send the message.
 */
export const RETRYABLE_ANDROID_RESULTS = [
  'RESULT_ERROR_RADIO_OFF',
  'RESULT_ERROR_NO_SERVICE',
  'RESULT_RADIO_NOT_AVAILABLE',
  'RESULT_ERROR_LIMIT_EXCEEDED',
  'RESULT_ERROR_NULL_PDU',
  'RESULT_ERROR_FDN_CHECK_FAILURE',
] as const;

// The app's error of a refused send (MessagesService.kt, processStateIntent): "Send result: " and
// then the result's name and its meaning in parentheses, the same from v1.43 to v1.68.
const SEND_RESULT = /^Send result: (RESULT_[A-Z_]+) \(/;

/** The Android result an SMS Gate error text names (undefined: not a refused send). */
export function androidSendResult(error: string | undefined | null): string | undefined {
  return error ? SEND_RESULT.exec(error)?.[1] : undefined;
}

/** Whether an SMS Gate phone's error says the message never left the phone. */
export function isRetryableSmsGateError(error: string | undefined | null): boolean {
  const result = androidSendResult(error);
  return result !== undefined && (RETRYABLE_ANDROID_RESULTS as readonly string[]).includes(result);
}

/**
 * Whether a retryable failure's error says Android's sending limit refused the message: the app's
 * text, or any device's error naming `LIMIT_EXCEEDED` (docs/devices.md, "Failover").
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

/**
 * The devices a round-robin message may go to now, in pool order: never one it was already
 * attempted on (a retryable failure), nor a paused one (quarantined, or at Android's limit).
 */
export function failoverPool(pool: readonly string[], options: { attempted: ReadonlySet<string>; paused: ReadonlySet<string> }): string[] {
  return pool.filter((device) => !options.attempted.has(device) && !options.paused.has(device));
}

/**
 * The round-robin pick of slot `slot` among `pool` for one message: the slot's device, or the next
 * one when that one is the device of an expired assignment; undefined when the pool is empty.
 */
export function pickDevice(pool: readonly string[], slot: number, previous: string | null): string | undefined {
  if (pool.length === 0) return undefined;
  const device = pool[slot % pool.length]!;
  return device === previous && pool.length > 1 ? pool[(slot + 1) % pool.length] : device;
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
