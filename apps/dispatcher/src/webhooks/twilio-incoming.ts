import {
  AppError,
  MAX_TWIML_BYTES,
  TWILIO_INCOMING_FORMAT,
  TwimlError,
  parseTwimlReplies,
  renderTwilioIncoming,
  segmentInfo,
  twilioIncomingParams,
  twilioSid,
  type CallbackRequest,
  type TwilioIncomingContext,
  type TwimlReply,
} from '@smsgw/core';
import {
  DeliveryAlreadyRecorded,
  deliveryRecorder,
  enabledUserById,
  receivedFromSnapshot,
  recordDeliveryAttempt,
  sendMessages,
  twilioAccount,
  type AttemptResult,
  type DeliveryAttempt,
  type SendDeps,
  type Sql,
} from '@smsgw/db/sql';
import type { PostResult } from './post-webhook.ts';

/**
 * Twilio's incoming SMS in the webhook engine (docs/compatibility.md, "Incoming SMS"): the delivery
 * of a received SMS to its device's `twilio_sms_url` is rendered as Twilio's incoming-message
 * webhook, signed with the account's Auth Token as it is now; the TwiML of a 2xx answer sends the
 * replies from the same device and SIM through smsgw's one send function.
 */

/** Whether the delivery goes to a received SMS's Twilio URL. */
export function isTwilioIncoming(delivery: DeliveryAttempt): boolean {
  return (delivery.callback?.format as string | undefined) === TWILIO_INCOMING_FORMAT;
}

/** The most of an answer read: the engine's usual cap is too small for ten long replies. */
export const TWILIO_ANSWER_BYTES = MAX_TWIML_BYTES;

/** The signed POST of the received SMS. `MessageSid` is `SM` and the SMS's id: the same on every attempt. */
export async function twilioIncomingRequest(sql: Sql, delivery: DeliveryAttempt): Promise<CallbackRequest> {
  const sms = receivedFromSnapshot(delivery.data);
  const account = await twilioAccount(sql, delivery.data.user_id as string);
  const context = delivery.callback!.context as Partial<TwilioIncomingContext>;
  const params = twilioIncomingParams(sms, twilioSid('SM', sms.id), context.to ?? sms.deviceId, account);
  return renderTwilioIncoming(delivery.url, params, account.authToken, delivery.id);
}

/**
 * Records a 2xx answer and acts on its TwiML. With replies, the delivery's success is recorded in
 * the transaction that stores them (it is their idempotency record), so that a second run of the
 * delivery, or its retry after a crash before that commit, stores them at most once and never
 * loses them once the answer is recorded. TwiML that cannot be acted on whole, or replies that the
 * send refuses (quota, a bad number), send nothing: the delivery fails with the reason as its error.
 * `skipped`: another run recorded the delivery first.
 */
export async function actOnTwilioAnswer(
  deps: { sql: Sql; send: SendDeps },
  delivery: DeliveryAttempt,
  answer: PostResult & { statusCode: number },
  at: Date,
): Promise<'succeeded' | 'failed' | 'skipped'> {
  const { sql } = deps;
  const { statusCode } = answer;
  const succeeded: AttemptResult = { outcome: 'succeeded', statusCode, error: null, at, nextAttemptAt: null };
  const fail = async (reason: string) => {
    const error = `The endpoint answered ${statusCode}, but no reply was sent: ${reason}`;
    await recordDeliveryAttempt(sql, delivery.id, { outcome: 'failed', statusCode, error, at, nextAttemptAt: null });
    return 'failed' as const;
  };
  let replies: TwimlReply[];
  try {
    if (answer.truncated) throw new TwimlError(`The answer is longer than ${TWILIO_ANSWER_BYTES} bytes.`);
    replies = parseTwimlReplies(answer.body);
  } catch (error) {
    if (error instanceof TwimlError) return fail(error.message);
    throw error;
  }
  if (replies.length === 0) {
    await recordDeliveryAttempt(sql, delivery.id, succeeded);
    return 'succeeded';
  }
  const user = await enabledUserById(sql, delivery.data.user_id as string);
  if (!user) return fail('the account is disabled.');
  const sms = receivedFromSnapshot(delivery.data);
  const texts = replies.map((reply) => segmentInfo(reply.body));
  try {
    await sendMessages(deps.send, {
      user,
      recipients: replies.map((reply) => reply.to ?? sms.from),
      groupIds: [],
      deviceId: sms.deviceId,
      // smsgw sends from SIMs 1 to 3; an SMS that came in on another slot is answered from the device's default.
      simNumber: sms.simNumber !== null && sms.simNumber <= 3 ? sms.simNumber : undefined,
      compose: () => ({
        kind: 'each',
        bodies: replies.map((reply) => reply.body),
        segments: texts.map((t) => t.segments),
        encodings: texts.map((t) => t.encoding),
      }),
      idempotency: deliveryRecorder(delivery.id, succeeded),
      // The device just received the SMS: a reply waits for it rather than fail while it is briefly away.
      queueWhenNoDevice: true,
      repeatRecipients: true,
    });
    return 'succeeded';
  } catch (error) {
    if (error instanceof DeliveryAlreadyRecorded) return 'skipped';
    if (error instanceof AppError) return fail(error.message);
    throw error;
  }
}
