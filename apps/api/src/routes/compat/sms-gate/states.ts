import { isCancelling, type MessageState } from '@smsgw/core';

/**
 * SMS Gate's processing states (docs/compatibility.md): one per recipient, mapped from smsgw's
 * message states, and one for the message, aggregated from its recipients in the order the SMS
 * Gate app itself uses (app `data/entities/MessageWithRecipients.kt`).
 */
export const PROCESSING_STATES = ['Pending', 'Processed', 'Sent', 'Delivered', 'Failed', 'Cancelling', 'Cancelled'] as const;
export type ProcessingState = (typeof PROCESSING_STATES)[number];

/** The states the `states` map of a message may name: client-go's `MessageState.Validate` refuses any other key. */
const TIMELINE_STATES: ReadonlySet<ProcessingState> = new Set(['Pending', 'Processed', 'Sent', 'Delivered', 'Failed']);

/** What the state of one recipient (one smsgw message) is read from. */
export interface RecipientRow {
  state: MessageState;
  createdAt: Date;
  sendingAt: Date | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
  cancelledAt: Date | null;
  /** The user asked the SMS Gate phone that holds it to cancel it (answered or not). */
  cancelRequestedAt: Date | null;
}

/** A recipient's state: a cancel asked of the phone that holds it is `Cancelling` until the phone answers. */
export function recipientState(row: Pick<RecipientRow, 'state' | 'cancelRequestedAt'>): ProcessingState {
  if (isCancelling(row)) return 'Cancelling';
  return RECIPIENT_STATE[row.state];
}

const RECIPIENT_STATE: Record<MessageState, ProcessingState> = {
  pending: 'Pending',
  assigned: 'Pending',
  sending: 'Processed',
  sent: 'Sent',
  delivered: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** The message's state from its recipients': the first rule that holds, in the app's order. */
export function messageState(states: readonly ProcessingState[]): ProcessingState {
  const any = (s: ProcessingState) => states.includes(s);
  const all = (s: ProcessingState) => states.length > 0 && states.every((x) => x === s);
  if (any('Pending')) return 'Pending';
  if (any('Cancelling')) return 'Cancelling';
  if (any('Cancelled')) return 'Cancelled';
  if (any('Processed')) return 'Processed';
  if (all('Failed')) return 'Failed';
  if (all('Delivered')) return 'Delivered';
  return 'Sent';
}

/** A recipient's states over time, each from when it was reached (a later step wins a tie). */
function timeline(row: RecipientRow): { at: number; state: ProcessingState }[] {
  const steps: [Date | null, ProcessingState][] = [
    [row.createdAt, 'Pending'],
    [row.sendingAt, 'Processed'],
    [row.sentAt, 'Sent'],
    [row.deliveredAt, 'Delivered'],
    [row.failedAt, 'Failed'],
    [row.cancelledAt, 'Cancelled'],
  ];
  return steps.flatMap(([at, state]) => (at ? [{ at: at.getTime(), state }] : [])).sort((a, b) => a.at - b.at);
}

/**
 * The `states` map: when the message as a whole first reached each state, replaying its
 * recipients' timestamps through the same aggregation. Only the five states client-go accepts
 * are named (a cancelled message shows it in `state`, not here).
 */
export function stateTimes(rows: readonly RecipientRow[]): Partial<Record<ProcessingState, string>> {
  const lines = rows.map(timeline);
  const moments = [...new Set(lines.flat().map((s) => s.at))].sort((a, b) => a - b);
  const reached: Partial<Record<ProcessingState, string>> = {};
  for (const at of moments) {
    const now = lines.map((line) => line.filter((s) => s.at <= at).at(-1)?.state ?? 'Pending');
    const state = messageState(now);
    if (TIMELINE_STATES.has(state) && reached[state] === undefined) reached[state] = new Date(at).toISOString();
  }
  return reached;
}
