import { TWILIO_API_VERSION, twilioErrorCode, twilioSid } from '../twilio-message.ts';
import type { CallbackOccurrence, CallbackRenderer } from './callback-event.ts';
import { twilioSignature } from './twilio-signature.ts';

/**
 * Twilio's status callbacks (its guide "Track the Message Status of Outbound Messages"): a
 * form-encoded POST of the message's SID, status and parties to the message's `StatusCallback`,
 * signed with `X-Twilio-Signature` by the account's Auth Token, so that the twilio libraries'
 * `validateRequest` accepts it. Status, SID and error code are the Message resource's own.
 */

/** What the Twilio route stores with the callback (a type, so that it is a record of its fields). */
export type TwilioContext = {
  /** The account's SID (`AC…`), stable for the user. */
  accountSid: string;
  /** The Messaging Service SID, when the send went through the service (not `From` one SIM). */
  messagingServiceSid?: string;
};

const pad = (n: number) => String(n).padStart(2, '0');

/** `RawDlrDoneDate`: the time of a delivery report in Twilio's `YYMMDDhhmm` (UTC here: smsgw knows it). */
function dlrDoneDate(at: Date): string {
  return `${pad(at.getUTCFullYear() % 100)}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}`;
}

/** The parameters of a status callback, in the order Twilio's examples list them. */
function statusParameters(context: Partial<TwilioContext>, status: string, occurrence: CallbackOccurrence, from: string | null): Record<string, string> {
  const { message, occurredAt } = occurrence;
  const sid = twilioSid('SM', message.id);
  const errorCode = twilioErrorCode(status);
  return {
    ...(errorCode !== null && { ErrorCode: String(errorCode) }),
    SmsSid: sid,
    SmsStatus: status,
    MessageStatus: status,
    To: message.to,
    ...(context.messagingServiceSid && { MessagingServiceSid: context.messagingServiceSid }),
    MessageSid: sid,
    AccountSid: context.accountSid ?? '',
    // The Message resource's `from`: absent, as the resource's null, while no SIM number is known.
    ...(from !== null && { From: from }),
    ApiVersion: TWILIO_API_VERSION,
    ...((status === 'delivered' || status === 'undelivered') && { RawDlrDoneDate: dlrDoneDate(occurredAt) }),
  };
}

export const renderTwilio: CallbackRenderer = (target, occurrence, { signingKey, senderNumber }) => {
  const context = target.context as Partial<TwilioContext>;
  // The status of the transition the callback reports (sent, delivered, undelivered or failed; Twilio's
  // names), not of the message when it is rendered: a `sent` callback sent after the delivery report
  // came, or whose snapshot was taken in the statement that applied both, still says `sent`.
  const status: string = occurrence.event;
  const params = statusParameters(context, status, occurrence, senderNumber);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'user-agent': 'TwilioProxy/1.1',
    // The account always has a token (the route made it before the send); a format row without one is not signed.
    ...(signingKey !== null && { 'x-twilio-signature': twilioSignature(signingKey, target.url, params) }),
  };
  return { method: 'POST', url: target.url, headers, body: new URLSearchParams(params).toString() };
};
