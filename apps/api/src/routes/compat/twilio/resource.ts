import { Type, type Static } from 'typebox';
import type { TwilioMessageRow } from '@smsgw/db';

/** Twilio's Message resource, as `twilio-node` reads it (`MessageInstance`). */
export const TwilioMessage = Type.Object(
  {
    account_sid: Type.String(), api_version: Type.Literal('2010-04-01'), body: Type.String(),
    date_created: Type.String({ description: 'RFC 2822' }), date_sent: Type.Union([Type.String(), Type.Null()]), date_updated: Type.String(),
    direction: Type.Literal('outbound-api'), error_code: Type.Union([Type.Integer(), Type.Null()]), error_message: Type.Union([Type.String(), Type.Null()]),
    from: Type.Union([Type.String(), Type.Null()]), messaging_service_sid: Type.String(), num_media: Type.Literal('0'), num_segments: Type.String(),
    price: Type.Null(), price_unit: Type.Null(), sid: Type.String(), status: Type.String(), subresource_uris: Type.Object({ media: Type.String() }),
    to: Type.String(), uri: Type.String(),
  },
  { $id: 'TwilioMessage', description: 'Twilio\'s Message resource.' },
);
export type TwilioMessage = Static<typeof TwilioMessage>;

export interface Account {
  accountSid: string;
  messagingServiceSid: string;
}

/** The error code Twilio gives a message that failed (30008: unknown error; 30003: unreachable handset, for an undelivered one). */
const FAILED_CODE = 30008;
const UNDELIVERED_CODE = 30003;

/**
 * smsgw's message state as Twilio's status: pending or assigned → `scheduled` while its send time
 * is ahead, else `queued`; sending → `sending`; sent, delivered; failed → `undelivered` when it had
 * been sent (a delivery report said not delivered), else `failed`; cancelled → `canceled`.
 */
export function twilioStatus(m: TwilioMessageRow, now = new Date()): string {
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

export const messageUri = (accountSid: string, sid: string) => `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`;

export function toTwilioMessage(account: Account, m: TwilioMessageRow): TwilioMessage {
  const sid = `SM${m.id.replaceAll('-', '')}`;
  const status = twilioStatus(m);
  const failed = status === 'failed' || status === 'undelivered';
  return {
    account_sid: account.accountSid,
    api_version: '2010-04-01',
    body: m.body,
    date_created: m.createdAt.toUTCString().replace('GMT', '+0000'),
    date_sent: m.sentAt ? m.sentAt.toUTCString().replace('GMT', '+0000') : null,
    date_updated: m.updatedAt.toUTCString().replace('GMT', '+0000'),
    direction: 'outbound-api',
    error_code: failed ? (status === 'undelivered' ? UNDELIVERED_CODE : FAILED_CODE) : null,
    error_message: failed ? m.error : null,
    from: m.from,
    messaging_service_sid: account.messagingServiceSid,
    num_media: '0',
    num_segments: String(m.segments),
    price: null,
    price_unit: null,
    sid,
    status,
    subresource_uris: { media: messageUri(account.accountSid, sid).replace(/\.json$/, '/Media.json') },
    to: m.to,
    uri: messageUri(account.accountSid, sid),
  };
}
