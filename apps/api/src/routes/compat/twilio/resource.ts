import { Type, type Static } from 'typebox';
import { TWILIO_API_VERSION, twilioErrorCode, twilioSid, twilioStatus } from '@smsgw/core';
import type { TwilioMessageRow } from '@smsgw/db';

/** Twilio's Message resource, as `twilio-node` reads it (`MessageInstance`). */
export const TwilioMessage = Type.Object(
  {
    account_sid: Type.String(),
    api_version: Type.Literal('2010-04-01'),
    body: Type.String(),
    date_created: Type.String({ description: 'RFC 2822' }),
    date_sent: Type.Union([Type.String(), Type.Null()]),
    date_updated: Type.String(),
    direction: Type.Literal('outbound-api'),
    error_code: Type.Union([Type.Integer(), Type.Null()]),
    error_message: Type.Union([Type.String(), Type.Null()]),
    from: Type.Union([Type.String(), Type.Null()]),
    messaging_service_sid: Type.String(),
    num_media: Type.Literal('0'),
    num_segments: Type.String(),
    price: Type.Null(),
    price_unit: Type.Null(),
    sid: Type.String(),
    status: Type.String(),
    subresource_uris: Type.Object({ media: Type.String() }),
    to: Type.String(),
    uri: Type.String(),
  },
  { $id: 'TwilioMessage', description: "Twilio's Message resource." },
);
export type TwilioMessage = Static<typeof TwilioMessage>;

export interface Account {
  accountSid: string;
  messagingServiceSid: string;
}

export const messageUri = (accountSid: string, sid: string) => `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`;

export function toTwilioMessage(account: Account, m: TwilioMessageRow): TwilioMessage {
  const sid = twilioSid('SM', m.id);
  const status = twilioStatus(m);
  const errorCode = twilioErrorCode(status);
  return {
    account_sid: account.accountSid,
    api_version: TWILIO_API_VERSION,
    body: m.body,
    date_created: m.createdAt.toUTCString().replace('GMT', '+0000'),
    date_sent: m.sentAt ? m.sentAt.toUTCString().replace('GMT', '+0000') : null,
    date_updated: m.updatedAt.toUTCString().replace('GMT', '+0000'),
    direction: 'outbound-api',
    error_code: errorCode,
    error_message: errorCode === null ? null : m.error,
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
