/**
 * The message status machine: the lifecycle states stored in Postgres, the transitions between
 * them, and the public `status` vocabulary of the interface (spec section 3) derived from them.
 */
export const MESSAGE_STATES = ['pending', 'assigned', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const;
export type MessageState = (typeof MESSAGE_STATES)[number];

export const MESSAGE_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const FINAL_STATES: readonly MessageState[] = ['delivered', 'failed', 'cancelled'];

/**
 * Allowed moves. Every move is forward except back to `pending`: from `assigned`, the lease expiry
 * (or the device going offline) handing back to round-robin a message that its device never took;
 * from `assigned` (offered) or `sending`, failover, when the device reports that the message failed
 * before it left it (a retryable failure: failover.ts). `failed` is reachable from
 * every state that is not final; a report may skip `sending` and a delivery report `sent`.
 *
 * An `assigned` message is *offered* once its device has taken it (claim or pull, `offered_at`):
 * from then on it stays with that device, so `assigned -> pending` applies only to messages never
 * offered, and a device's reports apply from `assigned` only to offered messages. Its first report
 * (`sending`, "I have it") is the acknowledgement (docs/devices.md, "Delivery").
 *
 * `cancelled` is the user's cancel of a message no device has in hand (pending, or assigned and never
 * offered), or the phone's answer to a cancel it was asked for (`sending`: an SMS Gate phone that
 * acknowledged it as still pending).
 *
 * The sub-states these moves depend on (never handed, in hand, ...) are named, each with its SQL twin,
 * in sub-states.ts.
 */
const TRANSITIONS: Record<MessageState, readonly MessageState[]> = {
  pending: ['assigned', 'failed', 'cancelled'],
  assigned: ['sending', 'sent', 'delivered', 'pending', 'failed', 'cancelled'],
  sending: ['sent', 'delivered', 'failed', 'cancelled', 'pending'],
  sent: ['delivered', 'failed'],
  delivered: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: MessageState, to: MessageState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The states from which `to` may be reached: the expected states of a compare-and-set. */
export function statesLeadingTo(to: MessageState): MessageState[] {
  return MESSAGE_STATES.filter((from) => canTransition(from, to));
}

export function isFinal(state: MessageState): boolean {
  return FINAL_STATES.includes(state);
}

const STATUS_OF_STATE: Record<MessageState, MessageStatus> = {
  pending: 'queued',
  assigned: 'queued',
  sending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function statusOf(state: MessageState): MessageStatus {
  return STATUS_OF_STATE[state];
}

/** Every value the `status` filter accepts: both vocabularies. */
export const STATUS_FILTER_VALUES = [...new Set<string>([...MESSAGE_STATUSES, ...MESSAGE_STATES])];

/**
 * The states a `status` filter value matches: a public status matches every state that maps to it,
 * a lifecycle state matches itself. Undefined for a value of neither list.
 */
export function statesMatching(filter: string): MessageState[] | undefined {
  if ((MESSAGE_STATES as readonly string[]).includes(filter)) return [filter as MessageState];
  if ((MESSAGE_STATUSES as readonly string[]).includes(filter)) {
    return MESSAGE_STATES.filter((state) => STATUS_OF_STATE[state] === filter);
  }
  return undefined;
}
