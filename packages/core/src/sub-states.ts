import type { MessageState } from './status.ts';

/**
 * The named sub-states of the status machine (docs/decisions.md, "Message sub-states"): where a
 * message stands between smsgw and its device, read from its state and its offer. Each predicate
 * has its SQL twin, over the messages row of alias `m`, defined here once; every statement that
 * needs a sub-state uses the twin (packages/db's sub-states.int.test.ts holds each pair together).
 *
 * A message is *offered* once its device has taken it (claim or pull, `offered_at`); from then on
 * it stays with that device until it reports it sent or final, or fails it over.
 */
export interface SubStateFields {
  state: MessageState;
  /** The first offer to its current device (null or absent: never offered). */
  offeredAt?: Date | null;
  /** When its user asked its phone to cancel it (null or absent: never asked). */
  cancelRequestedAt?: Date | null;
}

/** Assigned, and its device has not taken it yet: the assignment lease may still hand it to another device. */
export function isUnclaimed(m: SubStateFields): boolean {
  return m.state === 'assigned' && !m.offeredAt;
}

export function unclaimedSql(m: string): string {
  return `(${m}.state = 'assigned' AND ${m}.offered_at IS NULL)`;
}

/**
 * Never handed to a device: pending, or unclaimed. Only such a message may be cancelled by its
 * user at once, expire before it could be sent, or go back to round-robin on its own.
 */
export function isNeverHanded(m: SubStateFields): boolean {
  return m.state === 'pending' || isUnclaimed(m);
}

export function neverHandedSql(m: string): string {
  return `(${m}.state = 'pending' OR ${unclaimedSql(m)})`;
}

/** Offered and not acknowledged: its device has taken it and has not reported anything about it yet. */
export function isUnacknowledged(m: SubStateFields): boolean {
  return m.state === 'assigned' && !!m.offeredAt;
}

export function unacknowledgedSql(m: string): string {
  return `(${m}.state = 'assigned' AND ${m}.offered_at IS NOT NULL)`;
}

/**
 * In a device's hands: offered (unacknowledged) or `sending`, not yet reported sent or final. Only
 * such a message can fail over, lapse with its offer, or be cancelled on its phone.
 */
export function isInHand(m: SubStateFields): boolean {
  return isUnacknowledged(m) || m.state === 'sending';
}

export function inHandSql(m: string): string {
  return `(${unacknowledgedSql(m)} OR ${m}.state = 'sending')`;
}

/**
 * Its phone was asked to cancel it and has not answered: still `assigned` or `sending` with a
 * cancel requested (SMS Gate's `Cancelling`). Such a message is offered no more.
 */
export function isCancelling(m: SubStateFields): boolean {
  return (m.state === 'assigned' || m.state === 'sending') && !!m.cancelRequestedAt;
}

export function cancellingSql(m: string): string {
  return `(${m}.cancel_requested_at IS NOT NULL AND ${m}.state IN ('assigned', 'sending'))`;
}

/**
 * When a device's report happened: `at` is the device's clock, kept between the first offer (or
 * the acknowledgement) and `now`, so that the message's history stays in order.
 */
export function clampReportedAt(at: Date | null, m: { sendingAt?: Date | null; offeredAt?: Date | null }, now: Date): Date {
  // As SQL's greatest and least: null values are ignored.
  const floor = [at, m.sendingAt ?? null, m.offeredAt ?? null].filter((d): d is Date => d !== null);
  if (floor.length === 0) return now;
  const latest = Math.max(...floor.map((d) => d.getTime()));
  return new Date(Math.min(latest, now.getTime()));
}

/** The SQL twin of `clampReportedAt`: `at` and `now` are SQL timestamps, `m` the messages row. */
export function clampReportedAtSql(at: string, m: string, now: string): string {
  return `least(greatest(${at}, ${m}.sending_at, ${m}.offered_at), ${now}::timestamptz)`;
}
