import { Compile } from 'typebox/compile';
import { parseDeviceDate } from '@smsgw/core';
import type { DeviceReport } from '@smsgw/queue';
import { isRetryableSmsGateError } from './send-results.ts';
import { Snapshot } from './wire.ts';

/**
 * The app's state snapshots (`PATCH /message`, real-devices.md §2) as the device core's reports.
 * A snapshot is the message's whole state on the phone, not a change: each is read on its own,
 * and the dispatcher's compare-and-set keeps a late or repeated one from moving a message back.
 */

const isSnapshot = Compile(Snapshot);

/** The longest error text a report carries (the report job's limit). */
const MAX_ERROR_LENGTH = 1000;

export const CANCELLED_ERROR = 'Cancelled on the device.';

/**
 * The reports one element stands for: none for a malformed element or an unknown state. Times
 * come from the snapshot's `states` (the phone's clock, with its offset), else the arrival.
 */
export function reportsOfSnapshot(element: unknown, receivedAt: Date): DeviceReport[] {
  if (!isSnapshot.Check(element)) return [];
  const { id, state, states = {} } = element;
  const at = (name: string): { at?: string } => (Object.hasOwn(states, name) ? { at: parseDeviceDate(states[name], receivedAt).toISOString() } : {});
  switch (state) {
    case 'Pending':
    case 'Processed':
    case 'Cancelling':
      // The phone holds the message: the acknowledgement.
      return [{ id, status: 'sending', ...at(Object.hasOwn(states, 'Pending') ? 'Pending' : 'Processed') }];
    case 'Sent':
      return [{ id, status: 'sent', ...at('Sent') }];
    case 'Delivered':
      return [...(Object.hasOwn(states, 'Sent') ? [{ id, status: 'sent' as const, ...at('Sent') }] : []), { id, status: 'delivered', ...at('Delivered') }];
    case 'Failed': {
      // The app says only in its error text whether the SMS left the phone (docs/devices.md, "Failover").
      const error = errorOf(element.recipients);
      return [{ id, status: 'failed', ...at('Failed'), ...error, ...(isRetryableSmsGateError(error.error) && { retryable: true }) }];
    }
    case 'Cancelled':
      return [{ id, status: 'failed', ...at('Cancelled'), error: CANCELLED_ERROR }];
    default:
      return [];
  }
}

/** The first recipient's error text (smsgw messages have one recipient each). */
function errorOf(recipients: unknown[] | undefined): { error?: string } {
  const errors = (recipients ?? []).map((r) => (typeof r === 'object' && r !== null ? (r as { error?: unknown }).error : undefined));
  const error = errors.find((e): e is string => typeof e === 'string' && e.trim() !== '');
  return error === undefined ? {} : { error: error.slice(0, MAX_ERROR_LENGTH) };
}

/** The message id of a `Cancelled` snapshot (none for any other element). */
export function cancelledId(element: unknown): string[] {
  return isSnapshot.Check(element) && element.state === 'Cancelled' ? [element.id] : [];
}
