import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfigOrExit, logStream, ModemAgentConfigSchema } from '@smsgw/config';
import { startModemAgent } from './modem-agent.ts';

// `pnpm modem --port /dev/ttyUSB2 --server https://sms.example --token smsgw_dt_… [--baud 115200] [--pin 1234]`,
// or the same as MODEM_PORT, SMSGW_URL, SMSGW_DEVICE_TOKEN, MODEM_BAUD, MODEM_PIN (docs/devices.md).
const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    server: { type: 'string' },
    token: { type: 'string' },
    baud: { type: 'string' },
    pin: { type: 'string' },
    'state-file': { type: 'string' },
  },
});
const flags: Record<string, string | undefined> = {
  MODEM_PORT: values.port,
  SMSGW_URL: values.server,
  SMSGW_DEVICE_TOKEN: values.token,
  MODEM_BAUD: values.baud,
  MODEM_PIN: values.pin,
  MODEM_STATE_FILE: values['state-file'],
};
const config = loadConfigOrExit(ModemAgentConfigSchema, { ...process.env, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) });
const log = pino(
  { level: config.LOG_LEVEL, base: { service: 'modem-agent', pid: process.pid, port: config.MODEM_PORT }, redact: ['token'] },
  logStream(config.LOG_FORMAT),
);
const agent = startModemAgent(config, log);

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'stopping');
    // A last report to an smsgw that does not answer must not keep the modem's port for long.
    setTimeout(() => process.exit(1), 5000).unref();
    agent.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
