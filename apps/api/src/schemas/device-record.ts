import { Type } from 'typebox';
import { DEVICE_PROTOCOL_NAMES, DEVICE_PROTOCOLS, HEALTH_REASONS, HEALTH_STATUSES, MAX_BUDGET, MAX_RATE_LIMIT, NETWORK_STATES } from '@smsgw/core';
import { NullableTimestamp, Timestamp } from './common.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The health of a device (docs/devices.md, "Health"; packages/core/src/device-health.ts). */
const DeviceHealth = Type.Object(
  {
    status: Type.Enum([...HEALTH_STATUSES], {
      description: '`online`: available (as `available`); `degraded`: available, with `reasons`; `offline`: not available.',
    }),
    reasons: Type.Array(Type.Enum([...HEALTH_REASONS]), { description: 'Why it is degraded or offline (docs/devices.md, "Health").' }),
    last_seen_at: NullableTimestamp,
    connection: Type.Union([Type.Literal('stream'), Type.Literal('poll'), Type.Null()], { description: 'An event stream, polling only, or not connected.' }),
    app_version: nullable(Type.String()),
    battery: nullable(Type.Object({ level: nullable(Type.Integer()), charging: nullable(Type.Boolean()) }, { description: 'As the device last reported it.' })),
    signal: nullable(
      Type.Object(
        {
          dbm: nullable(Type.Integer({ description: 'Signal strength in dBm.' })),
          network: nullable(Type.String({ description: `Mobile network registration: ${NETWORK_STATES.join(', ')}.` })),
        },
        { description: 'As the device last reported it.' },
      ),
    ),
  },
  { $id: 'DeviceHealth', description: 'How the device is doing: its own reports, its connection and its send failures.' },
);

/** Pacing (docs/devices.md, "Pacing"): the most messages handed to the device in any minute, hour and day. */
const rateLimit = (window: string, value = Type.Integer()) =>
  Type.Union([value, Type.Null()], {
    description: `At most this many messages are handed to the device in any ${window} (null: no limit). Round-robin gives the excess to the user's other devices; messages named for this device wait.`,
  });
export const newRateLimit = (window: string) => Type.Optional(rateLimit(window, Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT })));

/** Carrier budgets (docs/devices.md, "Carrier budgets"). */
const BUDGET_WINDOWS = {
  segments_per_hour: 'message parts (segments) in any rolling hour',
  segments_per_day: 'message parts (segments) per UTC calendar day',
  segments_per_month: 'message parts (segments) per UTC calendar month',
  unique_recipients_per_month: 'different recipients per UTC calendar month (a recipient already sent to costs nothing more)',
} as const;
const budget = (field: keyof typeof BUDGET_WINDOWS, value = Type.Integer()) =>
  Type.Union([value, Type.Null()], {
    description: `At most this many ${BUDGET_WINDOWS[field]} (null: no limit). Round-robin skips a device or SIM without room; messages named for it wait.`,
  });
const budgets = (value?: () => ReturnType<typeof Type.Integer>) =>
  Object.fromEntries(Object.keys(BUDGET_WINDOWS).map((f) => [f, budget(f as keyof typeof BUDGET_WINDOWS, value?.())])) as Record<
    keyof typeof BUDGET_WINDOWS,
    ReturnType<typeof budget>
  >;
const newBudget = () => Type.Integer({ minimum: 1, maximum: MAX_BUDGET });
/** The budget fields of a PATCH: each optional, a positive integer up to 10,000,000 or null. */
export const newBudgets = () =>
  Object.fromEntries(Object.entries(budgets(newBudget)).map(([f, s]) => [f, Type.Optional(s)])) as {
    [K in keyof typeof BUDGET_WINDOWS]: ReturnType<typeof Type.Optional<ReturnType<typeof budget>>>;
  };
/** Twilio's incoming-SMS URL (docs/compatibility.md, "Incoming SMS"), as shown. */
const twilioSmsUrl = (value = Type.String()) =>
  Type.Union([value, Type.Null()], {
    description:
      'Each SMS received here is POSTed to this URL as Twilio does (form-encoded, X-Twilio-Signature), and its TwiML answer sends the replies (null: none).',
  });
/** The same in a PATCH: http(s), at most 2000 characters, reaching only public addresses (as webhook URLs); null removes it. */
export const newTwilioSmsUrl = () => Type.Optional(twilioSmsUrl(Type.String({ minLength: 1, maxLength: 2000 })));

export const SimBudgetsPatch = Type.Array(
  Type.Object(
    {
      sim_number: Type.Integer({ minimum: 1, maximum: 3, description: 'A SIM the device has (its `sim_cards`; SIM 1 when it reported none).' }),
      ...newBudgets(),
      twilio_sms_url: newTwilioSmsUrl(),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: 3,
    description:
      "Budgets and Twilio incoming-SMS URLs per SIM: fields left out stay, null removes one. smsgw then picks a SIM with room and passes its `sim_number`; a SIM's URL wins over the device's.",
  },
);

const BudgetUse = Type.Object({
  limit: Type.Union([Type.Integer(), Type.Null()]),
  used: Type.Integer(),
  resets_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the window next frees room: the end of the UTC day or month; for the rolling hour, when its oldest part leaves (null: none in it).',
  }),
});
const BudgetUsage = Type.Object(
  Object.fromEntries(Object.keys(BUDGET_WINDOWS).map((f) => [f, BudgetUse])) as Record<keyof typeof BUDGET_WINDOWS, typeof BudgetUse>,
);
const DeviceUsage = Type.Union(
  [Type.Intersect([BudgetUsage, Type.Object({ sims: Type.Array(Type.Intersect([Type.Object({ sim_number: Type.Integer() }), BudgetUsage])) })]), Type.Null()],
  { description: 'What the device (and each SIM with a budget) was handed in each window, against its limit (null in webhook events).' },
);

export const DeviceRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    enabled: Type.Boolean(),
    protocol: Type.Enum(DEVICE_PROTOCOL_NAMES, {
      description: `${DEVICE_PROTOCOL_NAMES.map((name) => `\`${name}\`: ${DEVICE_PROTOCOLS[name].description}`).join('; ')}.`,
    }),
    available: Type.Boolean({
      description:
        'Enabled and connected: it holds an event stream (or closed it within the grace), or it made a request within DEVICE_AVAILABLE_SECONDS (docs/devices.md).',
    }),
    connection: Type.Union([Type.Literal('stream'), Type.Literal('requests'), Type.Null()], {
      description: 'How the device is connected now: an event stream, only requests (polling), or not at all.',
    }),
    last_seen_at: NullableTimestamp,
    app_version: Type.Union([Type.String(), Type.Null()], { description: 'SMS Gate app version, from its requests.' }),
    sim_cards: Type.Union([Type.Array(Type.Unknown()), Type.Null()], { description: 'SIM cards the SMS Gate app reported (redacted by the app).' }),
    warnings: Type.Array(Type.String(), { description: 'What keeps the device from working well, in words.' }),
    health: DeviceHealth,
    rate_limit_per_minute: rateLimit('minute'),
    rate_limit_per_hour: rateLimit('hour'),
    rate_limit_per_day: rateLimit('day'),
    ...budgets(),
    twilio_sms_url: twilioSmsUrl(),
    sims: Type.Array(Type.Object({ sim_number: Type.Integer(), ...budgets(), twilio_sms_url: twilioSmsUrl() }), {
      description: 'The budgets and Twilio incoming-SMS URLs per SIM (only SIMs with one).',
    }),
    usage: DeviceUsage,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'Device',
    description: 'A phone or modem that sends your messages.',
    examples: [
      {
        id: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01',
        name: 'Shop phone',
        enabled: true,
        protocol: 'sms_gate',
        available: true,
        connection: 'stream',
        last_seen_at: '2026-03-01T09:30:00.000Z',
        app_version: '1.68.0',
        sim_cards: null,
        warnings: [],
        health: {
          status: 'degraded',
          reasons: ['low_battery'],
          last_seen_at: '2026-03-01T09:30:00.000Z',
          connection: 'stream',
          app_version: '1.68.0',
          battery: { level: 12, charging: false },
          signal: null,
        },
        rate_limit_per_minute: null,
        rate_limit_per_hour: null,
        rate_limit_per_day: null,
        segments_per_hour: null,
        segments_per_day: 300,
        segments_per_month: null,
        unique_recipients_per_month: null,
        twilio_sms_url: 'https://example.com/sms',
        sims: [],
        usage: {
          segments_per_hour: { limit: null, used: 12, resets_at: '2026-03-01T10:05:00.000Z' },
          segments_per_day: { limit: 300, used: 40, resets_at: '2026-03-02T00:00:00.000Z' },
          segments_per_month: { limit: null, used: 950, resets_at: '2026-04-01T00:00:00.000Z' },
          unique_recipients_per_month: { limit: null, used: 210, resets_at: '2026-04-01T00:00:00.000Z' },
          sims: [],
        },
        created_at: '2026-02-20T08:00:00.000Z',
        updated_at: '2026-02-20T08:00:00.000Z',
      },
    ],
  },
);

/** Devices a page holds unless `limit` says otherwise: more than most users have, so that most see them all on one page. */
export const DEVICE_PAGE_DEFAULT = 100;

export const DeviceListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: DEVICE_PAGE_DEFAULT, description: 'Devices on the page, 1 to 500.' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The `next_cursor` of the previous page: the devices after it.' })),
});

export const DeviceList = Type.Object(
  {
    data: Type.Array(DeviceRecord),
    next_cursor: Type.Optional(
      Type.String({
        description: 'Present when more devices follow this page: pass it as cursor for the next page (also given as a `Link: <…>; rel="next"` header).',
      }),
    ),
  },
  {
    $id: 'DeviceList',
    description: 'A page of your devices, oldest first (100 unless limit says otherwise).',
  },
);
