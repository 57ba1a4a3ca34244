import { Type, type Static } from 'typebox';
import { DEVICE_PROTOCOL_SLUGS } from '@smsgw/core/device-protocols';
import { LogEnv } from './process.ts';

/** The processes beside the gateway: the device simulator and the USB modem agent. */
export const DeviceSimConfigSchema = Type.Object({
  SMSGW_URL: Type.String({ default: 'http://127.0.0.1:3000', pattern: '^https?://', description: 'Base URL of the smsgw API.' }),
  SIM_PROTOCOL: Type.Enum(DEVICE_PROTOCOL_SLUGS, {
    default: 'native',
    description: "native: smsgw's device protocol (DEVICE_TOKEN); sms-gate: the SMS Gate app's mobile API (SIM_PAIRING, SIM_STATE_DIR).",
  }),
  DEVICE_TOKEN: Type.Optional(
    Type.String({
      pattern: '^smsgw_dt_[^,]+(,smsgw_dt_[^,]+)*$',
      description: 'Device token from device registration, or several separated by commas (one simulated phone each). Required for native.',
    }),
  ),
  SIM_PAIRING: Type.Optional(
    Type.String({
      pattern: '^([0-9]+|smsgw_pt_[^,]+)(,([0-9]+|smsgw_pt_[^,]+))*$',
      description: 'sms-gate: a pairing code or pairing token, or several separated by commas (one simulated phone each).',
    }),
  ),
  SIM_STATE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'sms-gate: where phone n keeps its registration (<n>.json), so that a restarted simulator does not register again.',
    }),
  ),
  SIM_MOBILE_URL: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'sms-gate: the server URL as typed into the app; default SMSGW_URL + /mobile/v1.' }),
  ),
  SIM_APP_VERSION: Type.String({
    default: '1.68.0',
    pattern: '^\\d+\\.\\d+\\.\\d+$',
    description: 'sms-gate: the app version the phones claim in their User-Agent.',
  }),
  SIM_TZ_OFFSET: Type.String({ default: '+03:00', pattern: '^[+-]\\d{2}:\\d{2}$', description: "sms-gate: the phones' local offset in the dates they send." }),
  SIM_SEND_MS: Type.Integer({ default: 50, minimum: 0, description: 'Simulated time to send one message.' }),
  SIM_DELIVER_MS: Type.Integer({ default: 200, minimum: 0, description: 'Simulated time from sent to the delivery report.' }),
  SIM_FAILURE_RATE: Type.Number({ default: 0, minimum: 0, maximum: 1, description: 'Share of messages that fail to send.' }),
  SIM_RETRYABLE_FAILURE_RATE: Type.Number({
    default: 0,
    minimum: 0,
    maximum: 1,
    description: 'Share of messages that fail before they leave the phone (native: `retryable: true`; sms-gate: RESULT_ERROR_NO_SERVICE), for failover tests.',
  }),
  SIM_POLL_SECONDS: Type.Integer({ default: 10, minimum: 1, description: 'Safety-net poll (sms-gate: pull) interval besides the event stream.' }),
  SIM_CLAIM_LIMIT: Type.Integer({ default: 100, minimum: 1, maximum: 500, description: 'native: messages claimed per request.' }),
  SIM_RECONNECT_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description: "sms-gate: event stream reconnect delay of attempts 1-5 (the app's 5 s); 6-10 wait 6 times as long, later ones 12 times.",
  }),
  SIM_RETRY_MS: Type.Integer({ default: 10000, minimum: 1, description: "sms-gate: first retry delay of a failed call (the app's 10 s), doubling." }),
  SIM_WEBHOOK_RETRY_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description: "sms-gate: first retry delay of a refused webhook post (the app's 5 s), doubling, 15 retries.",
  }),
  SIM_INBOUND_EVERY_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description: "sms-gate: post a fake incoming SMS to the phone's webhook this often (0: never).",
  }),
  SIM_START_SPREAD_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description: 'sms-gate: start the phones one after the other over this many ms rather than all at once (a fleet does not boot in one second).',
  }),
  SIM_LOG_FILE: Type.Optional(Type.String({ description: 'Append one JSON line per message sent (for tests).' })),
  SIM_PATCH_TIMES_FILE: Type.Optional(
    Type.String({ description: 'sms-gate: append the milliseconds each `PATCH /message` took as the phone saw it, one line each (for the benchmark).' }),
  ),
  LOG_LEVEL: LogEnv.properties.LOG_LEVEL,
  LOG_FORMAT: LogEnv.properties.LOG_FORMAT,
});
export type DeviceSimConfig = Static<typeof DeviceSimConfigSchema>;

/** The USB modem agent (docs/devices.md, "USB modems"): one process per modem. */
export const ModemAgentConfigSchema = Type.Object({
  MODEM_PORT: Type.String({ minLength: 1, description: "Serial port of the modem's AT interface, e.g. /dev/ttyUSB2 or /dev/serial/by-id/…. Required." }),
  MODEM_BAUD: Type.Integer({ default: 115200, minimum: 300, maximum: 4000000, description: 'Baud rate of the serial port.' }),
  MODEM_PIN: Type.Optional(Type.String({ pattern: '^[0-9]{4,8}$', description: 'SIM PIN, entered when the SIM asks for it.' })),
  SMSGW_URL: Type.String({ pattern: '^https?://', description: 'Base URL of the smsgw API. Required.' }),
  SMSGW_DEVICE_TOKEN: Type.String({ pattern: '^smsgw_dt_', description: "The modem's device token (POST /api/v1/devices). Required." }),
  MODEM_STATE_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Where the agent remembers what it submitted, so that a restart never sends a message twice; default modem-<port name>.state.json in the working directory.',
    }),
  ),
  MODEM_COMMAND_TIMEOUT_MS: Type.Integer({
    default: 10000,
    minimum: 100,
    description: 'Longest wait for the answer to an AT command; past it the modem is opened and initialised again.',
  }),
  MODEM_SEND_TIMEOUT_MS: Type.Integer({ default: 60000, minimum: 100, description: 'Longest wait for +CMGS after a PDU (the network may be slow).' }),
  MODEM_POLL_SECONDS: Type.Integer({
    default: 30,
    minimum: 1,
    description: 'How often the agent claims without a wake-up, retries forwarding incoming SMS and checks that the modem answers.',
  }),
  MODEM_RETRY_MAX_MS: Type.Integer({
    default: 10000,
    minimum: 100,
    description: 'Longest pause between attempts to reopen the port or reach smsgw (the pause doubles from 250 ms).',
  }),
  LOG_LEVEL: LogEnv.properties.LOG_LEVEL,
  LOG_FORMAT: LogEnv.properties.LOG_FORMAT,
});
export type ModemAgentConfig = Static<typeof ModemAgentConfigSchema>;
