import { Type, type Static, type TSchema } from 'typebox';
import { PROCESSING_STATES } from './states.ts';

/**
 * SMS Gate's client API as its server and client-go define it (`smsgateway/domain_messages.go`,
 * `domain_devices.go`, `responses_health.go`): field names and limits as upstream; unknown fields
 * are ignored as upstream's JSON decoder does; an optional field may also be null.
 */
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const SmsGateError = Type.Object(
  { message: Type.String({ description: 'What went wrong (401: `Unauthorized`).' }) },
  { $id: 'SmsGateError', description: 'An error of the SMS Gate client API: `{message}` alone, as upstream.' },
);
export const smsGateErrors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, SmsGateError]));

const State = Type.Enum(PROCESSING_STATES);
const Timestamp = Type.String({ format: 'date-time' });

export const SmsGateMessage = Type.Object(
  {
    id: Optional(Type.String({ maxLength: 36, description: 'Your id for the message (unique among yours); absent: smsgw makes one.' })),
    deviceId: Optional(Type.String({ maxLength: 36, description: 'The smsgw device to send with; absent: smsgw\'s routing chooses per recipient.' })),
    message: Optional(Type.String({ maxLength: 65535, description: 'The text (deprecated spelling of textMessage).' })),
    textMessage: Optional(Type.Object({ text: Type.String({ minLength: 1, maxLength: 65535 }) })),
    dataMessage: Optional(Type.Unknown({ description: 'Data SMS: not supported by smsgw (400).' })),
    phoneNumbers: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 100 }),
    isEncrypted: Optional(Type.Boolean({ description: 'true: not supported yet (400).' })),
    simNumber: Optional(Type.Integer({ minimum: 1, maximum: 3 })),
    withDeliveryReport: Optional(Type.Boolean({ description: 'Default true.' })),
    priority: Optional(Type.Integer({ minimum: -128, maximum: 127, description: '100 or more skips the devices\' pacing (not the carrier budgets).' })),
    ttl: Optional(Type.Integer({ minimum: 5, description: 'Seconds the message may wait for a device (not with validUntil).' })),
    validUntil: Optional(Timestamp),
    scheduleAt: Optional(Timestamp),
  },
  {
    $id: 'SmsGateMessage',
    description: 'A message to one or more recipients: one smsgw batch.',
    examples: [{ textMessage: { text: 'Your order has shipped.' }, phoneNumbers: ['+15551234567'] }],
  },
);
export type SmsGateMessage = Static<typeof SmsGateMessage>;

export const SmsGateMessageState = Type.Object(
  {
    id: Type.String(),
    deviceId: Type.String({ description: 'The device named at send, else the first one a recipient was assigned to; empty: none yet.' }),
    state: State,
    isHashed: Type.Boolean(),
    isEncrypted: Type.Boolean(),
    recipients: Type.Array(Type.Object({ phoneNumber: Type.String(), state: State, error: Type.Optional(Type.String()) })),
    states: Type.Record(Type.String(), Timestamp, { description: 'When the message as a whole first reached Pending, Processed, Sent, Delivered, Failed.' }),
    textMessage: Type.Optional(Type.Object({ text: Type.String() })),
  },
  { $id: 'SmsGateMessageState', description: 'A message\'s state, aggregated from its recipients\' as the SMS Gate app does.' },
);
export type SmsGateMessageState = Static<typeof SmsGateMessageState>;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

export const ListQuery = Type.Object({
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  state: Type.Optional(State),
  deviceId: Type.Optional(Type.String()),
  limit: Type.Integer({ minimum: 1, default: 50, description: 'At most 100: larger values are taken as 100.' }),
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  includeContent: Type.Boolean({ default: false }),
  sort: Type.Union([Type.Literal('created_at'), Type.Literal('-created_at')], { default: '-created_at' }),
});

export const SendQuery = Type.Object({
  skipPhoneValidation: Type.Optional(Type.Boolean({ description: 'Accepted; numbers must still come out as E.164.' })),
  deviceActiveWithin: Type.Optional(Type.Integer({ minimum: 0, description: 'Accepted and ignored: smsgw\'s routing picks an available device.' })),
});

export const SmsGateDevice = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastSeen: Timestamp,
    simCards: Type.Optional(Type.Array(Type.Object({
      slotIndex: Type.Integer(), simNumber: Type.Integer(),
      phoneNumber: Type.Optional(Type.String()), carrierName: Type.Optional(Type.String()), iccid: Type.Optional(Type.String()),
    }))),
  },
  { $id: 'SmsGateDevice', description: 'A device as SMS Gate lists it (lastSeen: its creation when it never connected).' },
);

const Check = Type.Object({ description: Type.String(), observedUnit: Type.String(), observedValue: Type.Integer(), status: Type.Union([Type.Literal('pass'), Type.Literal('fail')]) });
export const SmsGateHealth = Type.Object(
  {
    status: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')]),
    checks: Type.Record(Type.String(), Check),
  },
  { $id: 'SmsGateHealth', description: 'SMS Gate\'s health response: pass when Postgres and Redis answer.' },
);
