import type { MessageState } from './status.ts';

/**
 * What Twilio's Messages API and its status callbacks both say of an smsgw message
 * (docs/compatibility.md): its SID, its status and its error code, in one place so that a
 * callback always reads as the Message resource does.
 */

export const TWILIO_API_VERSION = '2010-04-01';

/** A 34-character Twilio SID: two letters and the 32 hex digits of a UUID. */
export function twilioSid(prefix: 'AC' | 'SM', uuid: string): string {
  return prefix + uuid.replaceAll('-', '').toLowerCase();
}

/** The UUID a SID of `prefix` names, or null when it is not one. */
export function uuidOfSid(prefix: 'AC' | 'SM', sid: string): string | null {
  const match = new RegExp(`^${prefix}([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$`).exec(sid);
  return match ? match.slice(1).join('-') : null;
}

/** What the status of a message depends on. */
export interface TwilioStatusFields {
  state: MessageState;
  sendAt?: Date | null;
  sentAt: Date | null;
}

/**
 * smsgw's message state as Twilio's status: pending or assigned → `scheduled` while its send time
 * is ahead, else `queued`; sending → `sending`; sent, delivered; failed → `undelivered` when it had
 * been sent (a delivery report said not delivered), else `failed`; cancelled → `canceled`.
 */
export function twilioStatus(m: TwilioStatusFields, now = new Date()): string {
  switch (m.state) {
    case 'pending':
    case 'assigned':
      return m.sendAt && m.sendAt > now ? 'scheduled' : 'queued';
    case 'failed':
      return m.sentAt ? 'undelivered' : 'failed';
    case 'cancelled':
      return 'canceled';
    default:
      return m.state;
  }
}

/** The error code Twilio gives a message that failed (30008: unknown error), or undelivered (30003: unreachable handset); else null. */
export function twilioErrorCode(status: string): number | null {
  if (status === 'failed') return 30008;
  if (status === 'undelivered') return 30003;
  return null;
}
