import type { CallbackEvent, CallbackRenderer } from './callback-event.ts';

/**
 * Kannel's delivery reports (its user guide, "SMS Delivery Reports" and "Parameters (Escape
 * Codes)"): a GET of the send's `dlr-url` with its escape codes filled in, each value URL-encoded
 * as Kannel's `octstr_url_encode` does (a space as `+`, everything but letters, digits and `-_.~`
 * as `%XX`).
 */

/** Kannel's DLR type of each callback event: 1 delivered to phone, 2 not delivered to phone, 8 delivered to SMSC, 16 not delivered to SMSC. */
export const KANNEL_DLR_TYPES: Record<CallbackEvent, number> = { delivered: 1, undelivered: 2, sent: 8, failed: 16 };

/**
 * The callback events a `dlr-mask` selects. A message that is never sent is reported as type 16
 * when the mask has 2 or 16, as Kannel's bearerbox does on an SMSC rejection; type 4 (buffered on
 * the SMSC) has no counterpart in smsgw and is never sent.
 */
export function kannelMaskEvents(mask: number): CallbackEvent[] {
  const events: CallbackEvent[] = [];
  if (mask & 8) events.push('sent');
  if (mask & 1) events.push('delivered');
  if (mask & 2) events.push('undelivered');
  if (mask & (2 | 16)) events.push('failed');
  return events;
}

/** What the Kannel route stores with the callback (a type, so that it is a record of its fields). */
export type KannelContext = {
  /** `from` as the client gave it (`%P`); a phone cannot choose the sender its carrier shows. */
  from: string;
  /** The sendsms user name (`%n`). */
  username: string;
  /** `coding` as given, 0 or 2 (`%c`). */
  coding: number;
  /** The recipients the client spelled otherwise than in E.164 (`0049…`), by E.164 number: `%p` gives them back as sent. */
  numbers?: Record<string, string>;
};

/** Kannel's URL encoding of one value. */
export function kannelUrlEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (c === ' ') out += '+';
    else if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `%t`: the time of the report in UTC, `YYYY-MM-DD HH:MM:SS` with the space written `+`, as Kannel writes it. */
function kannelTime(at: Date): string {
  return `${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}+${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}`;
}

/** `%A`: the report's text. Kannel writes `ACK/` and `NACK/<reason>` for its own SMSC reports; smsgw writes the SMPP stat words for the phone's. */
function replyText(event: CallbackEvent, error: string | null): string {
  const reason = error ?? '';
  if (event === 'sent') return 'ACK/';
  if (event === 'failed') return `NACK/${reason}`;
  if (event === 'delivered') return 'DELIVRD';
  return reason ? `UNDELIV/${reason}` : 'UNDELIV';
}

/** Fills Kannel's escape codes of `pattern`; `%%` is a percent sign and an unknown code stays as written. */
export function fillKannelEscapes(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/%(.)/gsu, (whole, code: string) => {
    if (code === '%') return '%';
    const value = values[code];
    return value === undefined ? whole : value;
  });
}

export const renderKannel: CallbackRenderer = (target, { event, message, occurredAt }) => {
  const context = target.context as Partial<KannelContext>;
  const from = context.from ?? '';
  const coding = context.coding ?? 0;
  const reply = replyText(event, message.error);
  const recipient = context.numbers?.[message.to] ?? message.to;
  const plus = (number: string) => (number.startsWith('00') ? `%2B${kannelUrlEncode(number.slice(2))}` : kannelUrlEncode(number));
  const url = fillKannelEscapes(target.url, {
    d: String(KANNEL_DLR_TYPES[event]),
    p: kannelUrlEncode(recipient),
    P: kannelUrlEncode(from),
    q: plus(recipient),
    Q: plus(from),
    t: kannelTime(occurredAt),
    T: String(Math.floor(occurredAt.getTime() / 1000)),
    A: kannelUrlEncode(reply),
    b: kannelUrlEncode(reply),
    I: message.id,
    F: message.id,
    i: kannelUrlEncode(message.deviceId ?? ''),
    n: kannelUrlEncode(context.username ?? ''),
    c: String(coding),
    C: coding === 2 ? 'UTF-16BE' : 'UTF-8',
  });
  return { method: 'GET', url, headers: { 'user-agent': 'smsgw-kannel-dlr' }, body: null };
};
