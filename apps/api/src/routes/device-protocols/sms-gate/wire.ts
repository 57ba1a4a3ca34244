import { Type, type Static } from 'typebox';
import { ErrorBody } from '../../../schemas/common.ts';

/**
 * The SMS Gate app's wire shapes (real-devices.md §2, §2b). The app sends JSON through Gson:
 * absent keys rather than nulls, and fields a later version adds; so request shapes allow unknown
 * keys, and what the app reads never carries a null.
 */

/** Errors every Bearer endpoint can answer; 401 is the only answer that makes the app register again. */
export const phoneErrors = { 401: ErrorBody, 429: ErrorBody };

export const RegisterBody = Type.Object(
  {
    name: Type.String({ maxLength: 1000, description: '`<manufacturer>/<product>` of the phone.' }),
    pushToken: Type.Optional(Type.String({ maxLength: 4096, description: 'Google push token: the phone then never opens the event stream.' })),
    simCards: Type.Optional(Type.Unknown({ description: 'The SIM cards, as the app redacts them (v1.65+); kept for the device list.' })),
  },
  { examples: [{ name: 'Google/Pixel 7' }] },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const Registered = Type.Object({
  id: Type.String({ description: 'The device id.' }),
  token: Type.String({ description: 'The device token, for `Authorization: Bearer`.' }),
  login: Type.String({ description: 'A label the app shows as the user name.' }),
});

export const PatchDeviceBody = Type.Object(
  {
    id: Type.String({ maxLength: 64 }),
    pushToken: Type.Optional(Type.String({ maxLength: 4096 })),
    simCards: Type.Optional(Type.Unknown()),
  },
  { examples: [{ id: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01' }] },
);

export const ExternalIp = Type.Object({ externalIp: Type.String() });

export const PullQuery = Type.Object({
  order: Type.Optional(Type.String({ description: '`lifo` (newest first, the default) or `fifo`; anything else is `lifo`.' })),
});

export const MobileMessage = Type.Object({
  id: Type.String(),
  textMessage: Type.Object({ text: Type.String() }),
  message: Type.String({ description: 'The text again, for app versions before typed messages.' }),
  phoneNumbers: Type.Array(Type.String(), { minItems: 1, maxItems: 1 }),
  simNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, description: 'The SIM slot to send from; absent: the phone’s own choice.' })),
  withDeliveryReport: Type.Boolean(),
  isEncrypted: Type.Boolean(),
  priority: Type.Optional(
    Type.Integer({ minimum: -128, maximum: 127, description: "SMS Gate's priority; absent: 0. 100 or more: the app skips its own limits and delays." }),
  ),
  validUntil: Type.String({ format: 'date-time', description: 'Send it before this moment or fail it: the same on every pull.' }),
  createdAt: Type.String({ format: 'date-time' }),
  state: Type.Literal('Pending'),
});
export type MobileMessage = Static<typeof MobileMessage>;

/** Elements beyond this many in one `PATCH /message` refuse the request (the app sends one). */
export const MAX_SNAPSHOTS = 250;

export const SnapshotsBody = Type.Array(Type.Unknown(), {
  maxItems: MAX_SNAPSHOTS,
  description: 'State snapshots, each applied on its own: a malformed one or one of an unknown id is ignored.',
  examples: [[{ id: '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10', state: 'Sent', recipients: [{ phoneNumber: '+15551234567', state: 'Sent' }] }]],
});

/** One element of `PATCH /message`; anything else about it is read leniently (see messages.ts). */
export const Snapshot = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  state: Type.String({ maxLength: 32 }),
  recipients: Type.Optional(Type.Array(Type.Unknown())),
  states: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type Snapshot = Static<typeof Snapshot>;

/**
 * What the phone is told (`phoneSettings` in @smsgw/core, docs/devices.md "Settings"): smsgw's own
 * values and the account's SMS Gate settings that apply to phones. Every value is an object, and
 * no field is ever null (the app would reset it and ask its owner to restart).
 */
export const Settings = Type.Object({
  gateway: Type.Object({ notification_channel: Type.Literal('SSE_ONLY') }),
  webhooks: Type.Object({ signing_key: Type.String() }),
  // Makes the app ping (a pull and the `system:ping` webhook) this often, after its next restart.
  ping: Type.Object({ interval_seconds: Type.Integer({ minimum: 1 }) }),
  // smsgw's rate limit of the device (its one period: the shortest limit set), else the account's; the account's pacing.
  messages: Type.Optional(
    Type.Object({
      limit_period: Type.Optional(Type.Enum(['Disabled', 'PerMinute', 'Per30Minutes', 'PerHour', 'PerDay'])),
      limit_value: Type.Optional(Type.Integer({ minimum: 1 })),
      send_interval_min: Type.Optional(Type.Integer({ minimum: 1 })),
      send_interval_max: Type.Optional(Type.Integer({ minimum: 1 })),
      sim_selection_mode: Type.Optional(Type.Enum(['OSDefault', 'RoundRobin', 'Random'])),
      processing_order: Type.Optional(Type.Enum(['LIFO', 'FIFO'])),
      log_lifetime_days: Type.Optional(Type.Integer({ minimum: 1 })),
      work_hours_enabled: Type.Optional(Type.Boolean()),
      work_hours_start: Type.Optional(Type.String()),
      work_hours_end: Type.Optional(Type.String()),
    }),
  ),
  logs: Type.Optional(Type.Object({ lifetime_days: Type.Optional(Type.Integer({ minimum: 1 })) })),
  receiver: Type.Optional(Type.Object({ content_provider_enabled: Type.Optional(Type.Boolean()) })),
});

export const PhoneWebhook = Type.Object({
  id: Type.String({ maxLength: 36 }),
  url: Type.String(),
  event: Type.Enum(['sms:received', 'system:ping']),
});

export const InboundParams = Type.Object({
  deviceId: Type.String({ maxLength: 64 }),
  secret: Type.String({ maxLength: 128 }),
});

export const InboundBody = Type.Object(
  {
    event: Type.String({ maxLength: 64 }),
    deviceId: Type.String({ maxLength: 64 }),
    payload: Type.Optional(Type.Unknown()),
  },
  {
    examples: [
      {
        event: 'sms:received',
        deviceId: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01',
        payload: { messageId: 'a1b2c3', message: 'STOP', sender: '+15557654321', receivedAt: '2026-03-01T12:02:11.000+02:00' },
      },
    ],
  },
);

/** The payload of `sms:received` (v1.53 and earlier carry no `sender` nor `recipient`). */
export const ReceivedSmsPayload = Type.Object({
  messageId: Type.String({ minLength: 1, maxLength: 64 }),
  message: Type.String({ maxLength: 20_000 }),
  sender: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  phoneNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  recipient: Type.Optional(Type.String({ maxLength: 128 })),
  simNumber: Type.Optional(Type.Integer()),
  receivedAt: Type.Optional(Type.String({ maxLength: 64 })),
});
export type ReceivedSmsPayload = Static<typeof ReceivedSmsPayload>;

export const InboundAnswer = Type.Object({ stored: Type.Integer(), duplicates: Type.Integer() });
