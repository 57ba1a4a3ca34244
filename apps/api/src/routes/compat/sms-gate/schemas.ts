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
    deviceId: Optional(Type.String({ maxLength: 36, description: "The smsgw device to send with; absent: smsgw's routing chooses per recipient." })),
    message: Optional(Type.String({ maxLength: 65535, description: 'The text (deprecated spelling of textMessage).' })),
    textMessage: Optional(Type.Object({ text: Type.String({ minLength: 1, maxLength: 65535 }) })),
    dataMessage: Optional(Type.Unknown({ description: 'Data SMS: not supported by smsgw (400).' })),
    phoneNumbers: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 100 }),
    isEncrypted: Optional(
      Type.Boolean({
        description:
          'true: the text and each phone number are SMS Gate ciphertexts (`$aes-256-cbc/pbkdf2-sha1$i=…$salt$data`), forwarded unchanged to an SMS Gate phone, which decrypts them.',
      }),
    ),
    simNumber: Optional(Type.Integer({ minimum: 1, maximum: 3 })),
    withDeliveryReport: Optional(Type.Boolean({ description: 'Default true.' })),
    priority: Optional(Type.Integer({ minimum: -128, maximum: 127, description: "100 or more skips the devices' pacing (not the carrier budgets)." })),
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
  { $id: 'SmsGateMessageState', description: "A message's state, aggregated from its recipients' as the SMS Gate app does." },
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
  deviceActiveWithin: Type.Optional(Type.Integer({ minimum: 0, description: "Accepted and ignored: smsgw's routing picks an available device." })),
});

export const SmsGateDevice = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastSeen: Timestamp,
    simCards: Type.Optional(
      Type.Array(
        Type.Object({
          slotIndex: Type.Integer(),
          simNumber: Type.Integer(),
          phoneNumber: Type.Optional(Type.String()),
          carrierName: Type.Optional(Type.String()),
          iccid: Type.Optional(Type.String()),
        }),
      ),
    ),
  },
  { $id: 'SmsGateDevice', description: 'A device as SMS Gate lists it (lastSeen: its creation when it never connected).' },
);

const Check = Type.Object({
  description: Type.String(),
  observedUnit: Type.String(),
  observedValue: Type.Integer(),
  status: Type.Union([Type.Literal('pass'), Type.Literal('fail')]),
});
export const SmsGateHealth = Type.Object(
  {
    status: Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')]),
    checks: Type.Record(Type.String(), Check),
  },
  { $id: 'SmsGateHealth', description: "SMS Gate's health response: pass when Postgres and Redis answer." },
);

/** An integer setting: at least 1 (client-go's `min=1`), at most what the app's `Int` holds. */
const Count = (description: string) => Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description }));
const Text = (description: string) => Optional(Type.String({ description }));
const Choice = (values: string[], description: string) => Optional(Type.Enum(values, { description }));
const Flag = (description: string) => Optional(Type.Boolean({ description }));
const Clock = (description: string) => Optional(Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: `${description} (HH:mm).` }));
const Module = (fields: Parameters<typeof Type.Object>[0], description: string) => Optional(Type.Object(fields, { description }));

/**
 * SMS Gate's `DeviceSettings` (client-go `domain_settings.go`, the server's `modules/settings`
 * rules): top-level modules, snake_case fields (client-ts's camelCase read as them). Unknown
 * modules and fields are dropped, as upstream drops them; a null field is left out (in a PATCH:
 * cleared).
 */
export const SmsGateSettingsBody = Type.Object(
  {
    encryption: Module({ passphrase: Text('Refused (400): smsgw never gives a phone a passphrase.') }, 'End-to-end encryption.'),
    gateway: Module(
      {
        cloud_url: Text('Refused (400), as upstream refuses it.'),
        private_token: Text('Refused (400), as upstream refuses it.'),
        notification_channel: Choice(['AUTO', 'SSE_ONLY'], 'Stored; phones are always told SSE_ONLY (smsgw has no Google push).'),
      },
      "The phone's server connection.",
    ),
    logs: Module({ lifetime_days: Count('Days the phone keeps its logs.') }, "The phone's logs."),
    messages: Module(
      {
        send_interval_min: Count('Seconds the phone waits at least between two sends.'),
        send_interval_max: Count('Seconds it waits at most (not below send_interval_min).'),
        limit_period: Choice(
          ['Disabled', 'PerMinute', 'Per30Minutes', 'PerHour', 'PerDay'],
          "The period of the phone's own limit; a device's smsgw rate limit replaces it.",
        ),
        limit_value: Count('Messages per limit_period.'),
        sim_selection_mode: Choice(['OSDefault', 'RoundRobin', 'Random'], 'How the phone picks a SIM when smsgw names none.'),
        log_lifetime_days: Count('Days the phone keeps its message log.'),
        processing_order: Choice(['LIFO', 'FIFO'], 'The order the phone sends what it holds.'),
        work_hours_enabled: Flag('Whether the phone sends only within its work hours (app versions that have them).'),
        work_hours_start: Clock('Start of the work hours'),
        work_hours_end: Clock('End of the work hours'),
      },
      'How the phones send.',
    ),
    ping: Module({ interval_seconds: Count("Seconds between pings; phones get the shorter of this and smsgw's own.") }, "The phones' pings."),
    receiver: Module({ content_provider_enabled: Flag('Whether the phone also watches the SMS store for incoming SMS.') }, 'Incoming SMS on the phone.'),
    webhooks: Module(
      {
        internet_required: Flag('Stored; not given to phones (their webhooks go to smsgw).'),
        retry_count: Count('Stored; not given to phones.'),
        signing_key: Optional(
          Type.String({
            minLength: 1,
            maxLength: 256,
            description: 'The key of X-Signature on the SMS Gate-format webhooks smsgw sends; absent or null: the current key stays.',
          }),
        ),
      },
      'SMS Gate-format webhooks.',
    ),
  },
  {
    $id: 'SmsGateSettings',
    description: "The account's SMS Gate settings; what applies to phones reaches them (docs/compatibility.md).",
    examples: [{ messages: { limit_period: 'PerMinute', limit_value: 10, send_interval_min: 2, send_interval_max: 5 } }],
  },
);

export const IncomingMessage = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('SMS'),
    sender: Type.String(),
    recipient: Type.Optional(Type.String({ description: "The receiving SIM's number, when the device knows it." })),
    simNumber: Type.Optional(Type.Integer()),
    contentPreview: Type.String({ description: 'The whole text.' }),
    createdAt: Timestamp,
  },
  { $id: 'SmsGateIncomingMessage', description: "A received SMS as SMS Gate's `IncomingMessage`." },
);

export const InboxQuery = Type.Object({
  type: Type.Optional(Type.Enum(['SMS', 'DATA_SMS', 'MMS', 'MMS_DOWNLOADED'], { description: 'smsgw receives SMS only: any other type lists nothing.' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  deviceId: Type.Optional(Type.String()),
  includeAttachments: Type.Optional(Type.Boolean({ description: 'Accepted (client-ts sends it); SMS have no attachments.' })),
});
