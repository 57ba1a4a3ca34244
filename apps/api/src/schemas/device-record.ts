import { Type } from 'typebox';
import { HEALTH_REASONS, HEALTH_STATUSES, MAX_RATE_LIMIT, NETWORK_STATES } from '@smsgw/core';
import { NullableTimestamp, Timestamp } from './common.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The health of a device (docs/devices.md, "Health"; packages/core/src/device-health.ts). */
const DeviceHealth = Type.Object({
  status: Type.Enum([...HEALTH_STATUSES], {
    description: '`online`: available (as `available`); `degraded`: available, with `reasons`; `offline`: not available.',
  }),
  reasons: Type.Array(
    Type.Enum([...HEALTH_REASONS]),
    { description: 'Why it is degraded or offline (docs/devices.md, "Health").' },
  ),
  last_seen_at: NullableTimestamp,
  connection: Type.Union([Type.Literal('stream'), Type.Literal('poll'), Type.Null()], { description: 'An event stream, polling only, or not connected.' }),
  app_version: nullable(Type.String()),
  battery: nullable(Type.Object({ level: nullable(Type.Integer()), charging: nullable(Type.Boolean()) }, { description: 'As the device last reported it.' })),
  signal: nullable(Type.Object({
    dbm: nullable(Type.Integer({ description: 'Signal strength in dBm.' })),
    network: nullable(Type.String({ description: `Mobile network registration: ${NETWORK_STATES.join(', ')}.` })),
  }, { description: 'As the device last reported it.' })),
}, { $id: 'DeviceHealth', description: 'How the device is doing: its own reports, its connection and its send failures.' });

/** Pacing (docs/devices.md, "Pacing"): the most messages handed to the device in any minute, hour and day. */
const rateLimit = (window: string, value = Type.Integer()) =>
  Type.Union([value, Type.Null()], {
    description: `At most this many messages are handed to the device in any ${window} (null: no limit). Round-robin gives the excess to the user's other devices; messages named for this device wait.`,
  });
export const newRateLimit = (window: string) => Type.Optional(rateLimit(window, Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT })));

export const DeviceRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  protocol: Type.Enum(['native', 'sms_gate'], { description: '`native`: the device protocol (modem agent, simulator); `sms_gate`: a phone running the SMS Gate app.' }),
  available: Type.Boolean({ description: 'Enabled and connected: it holds an event stream (or closed it within the grace), or it made a request within DEVICE_AVAILABLE_SECONDS (docs/devices.md).' }),
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
  created_at: Timestamp,
  updated_at: Timestamp,
}, {
  $id: 'Device',
  description: 'A phone or modem that sends your messages.',
  examples: [{
    id: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01', name: 'Shop phone', enabled: true, protocol: 'sms_gate', available: true, connection: 'stream',
    last_seen_at: '2026-03-01T09:30:00.000Z', app_version: '1.68.0', sim_cards: null, warnings: [],
    health: {
      status: 'degraded', reasons: ['low_battery'], last_seen_at: '2026-03-01T09:30:00.000Z', connection: 'stream', app_version: '1.68.0',
      battery: { level: 12, charging: false }, signal: null,
    },
    rate_limit_per_minute: null, rate_limit_per_hour: null, rate_limit_per_day: null,
    created_at: '2026-02-20T08:00:00.000Z', updated_at: '2026-02-20T08:00:00.000Z',
  }],
});
