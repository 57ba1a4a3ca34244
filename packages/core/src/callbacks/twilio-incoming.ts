import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { ReceivedFields } from '../received-record.ts';
import { segmentInfo } from '../segments.ts';
import { codePointLength, MAX_BODY_CODE_POINTS } from '../text.ts';
import type { CallbackRequest } from './callback-event.ts';
import { twilioSignature } from './twilio-signature.ts';

/**
 * Twilio's incoming-message webhook (docs/compatibility.md, "Incoming SMS"): each SMS a device
 * receives is POSTed form-encoded, with Twilio's parameters and its `X-Twilio-Signature`, to the
 * URL the device (or SIM) names; the TwiML the endpoint answers with sends the replies. The request
 * is stored as a callback of the received SMS, in this format, and delivered by the webhook engine.
 */
export const TWILIO_INCOMING_FORMAT = 'twilio-incoming';

/** The most `<Message>` replies one answer may hold; an answer with more sends none (docs/compatibility.md). */
export const MAX_TWIML_REPLIES = 10;

/** The most of a TwiML answer that is read: ten replies of 1,600 characters fit, in any script. */
export const MAX_TWIML_BYTES = 64 * 1024;

/** What the inbound statement stores with the callback: `To`, fixed when the SMS arrived. */
export interface TwilioIncomingContext {
  /** The receiving SIM's phone number when known, else the device id. */
  to: string;
}

export interface TwilioIncomingAccount {
  accountSid: string;
  messagingServiceSid: string;
  authToken: string;
}

/**
 * Twilio's parameters of an incoming SMS (its guide "Twilio's request to your incoming message
 * Webhook URL"). The location parameters (`FromCity`, `ToCountry`, …) are left out: smsgw does not
 * know them, and Twilio leaves out what it does not know too.
 */
export function twilioIncomingParams(sms: ReceivedFields, messageSid: string, to: string, account: TwilioIncomingAccount): Record<string, string> {
  return {
    MessageSid: messageSid,
    SmsSid: messageSid,
    SmsMessageSid: messageSid,
    AccountSid: account.accountSid,
    MessagingServiceSid: account.messagingServiceSid,
    From: sms.from,
    To: to,
    Body: sms.body,
    NumMedia: '0',
    NumSegments: String(segmentInfo(sms.body).segments),
    SmsStatus: 'received',
    ApiVersion: '2010-04-01',
  };
}

/**
 * The signed POST of an incoming SMS, keyed by the account's Auth Token as it is when sent.
 * `I-Twilio-Idempotency-Token` is the same on every attempt of one delivery, as Twilio's is.
 */
export function renderTwilioIncoming(url: string, params: Record<string, string>, authToken: string, idempotencyToken: string): CallbackRequest {
  return {
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'smsgw-twilio',
      'x-twilio-signature': twilioSignature(authToken, url, params),
      'i-twilio-idempotency-token': idempotencyToken,
    },
    body: new URLSearchParams(params).toString(),
  };
}

/** A TwiML answer smsgw cannot act on: nothing of it is sent, and the message is shown on the delivery. */
export class TwimlError extends Error {}

/** One `<Message>` of an answer: its text and where to (null: back to the sender). */
export interface TwimlReply {
  to: string | null;
  body: string;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Texts stay texts: "123" is a reply, not a number.
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name) => name === 'Message' || name === 'Body',
  processEntities: { enabled: true, maxTotalExpansions: 1000, maxExpandedLength: MAX_TWIML_BYTES },
});

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The replies of a TwiML answer (the subset of Twilio's messaging TwiML that docs/compatibility.md
 * lists): `<Response>` with `<Message>` verbs, each with its text or a `<Body>`, and an optional
 * `to`. An empty answer, `<Response/>` and `<Response></Response>` are no reply. Anything else
 * smsgw would have to leave out (`<Redirect>`, `<Media>`, an unknown element) refuses the whole answer.
 */
export function parseTwimlReplies(answer: string): TwimlReply[] {
  if (answer.trim() === '') return [];
  const valid = XMLValidator.validate(answer);
  if (valid !== true) throw new TwimlError(`The answer is not XML: ${valid.err.msg} (line ${valid.err.line}).`);
  let document: Node;
  try {
    document = parser.parse(answer) as Node;
  } catch (error) {
    throw new TwimlError(`The answer is not XML: ${(error as Error).message}`);
  }
  const roots = Object.keys(document).filter((key) => key !== '?xml');
  if (roots.length !== 1 || roots[0] !== 'Response') throw new TwimlError('The answer is not TwiML: its root element must be <Response>.');
  const response = document.Response;
  if (!isNode(response)) {
    if (typeof response === 'string' && response.trim() !== '') throw new TwimlError('<Response> holds text outside a <Message>.');
    return [];
  }
  for (const key of Object.keys(response)) {
    if (key === 'Message' || key.startsWith('@')) continue;
    if (key === '#text') throw new TwimlError('<Response> holds text outside a <Message>.');
    throw new TwimlError(`<${key}> is not supported: smsgw acts on <Message> only.`);
  }
  const messages = (response.Message as unknown[] | undefined) ?? [];
  if (messages.length > MAX_TWIML_REPLIES) {
    throw new TwimlError(`The answer holds ${messages.length} <Message> replies; smsgw sends at most ${MAX_TWIML_REPLIES} per incoming SMS.`);
  }
  return messages.map((message, i) => toReply(message, i + 1));
}

function toReply(message: unknown, position: number): TwimlReply {
  const where = `<Message> ${position}`;
  let body: unknown = message;
  let to: string | null = null;
  if (isNode(message)) {
    for (const key of Object.keys(message)) {
      if (key === 'Media') throw new TwimlError(`${where} has <Media>: MMS is not supported.`);
      if (!['#text', 'Body', '@to', '@from', '@action', '@method', '@statusCallback'].includes(key)) {
        throw new TwimlError(`${where}: ${key.startsWith('@') ? `the attribute ${key.slice(1)}` : `<${key}>`} is not supported.`);
      }
    }
    const bodies = message.Body as unknown[] | undefined;
    if (bodies && bodies.length > 1) throw new TwimlError(`${where} has more than one <Body>.`);
    body = bodies ? bodies[0] : message['#text'];
    if (typeof message['@to'] === 'string') to = message['@to'].trim();
  }
  const text = typeof body === 'string' ? body : '';
  if (text === '') throw new TwimlError(`${where} has no text.`);
  if (codePointLength(text) > MAX_BODY_CODE_POINTS) throw new TwimlError(`${where} is longer than ${MAX_BODY_CODE_POINTS} characters.`);
  return { to, body: text };
}
