import { parseArgs } from 'node:util';
import { pino, type Logger } from 'pino';
import { DeviceSimConfigSchema, loadConfigOrExit, logStream, type DeviceSimConfig } from '@smsgw/config';
import { protocolOfSlug, type DeviceProtocol } from '@smsgw/core/device-protocols';
import { startDeviceSim, type DeviceSim } from './device-sim.ts';
import { startSmsGatePhones } from './sms-gate-phone.ts';

// `pnpm start:device-sim [--protocol native|sms-gate]`: simulated phones, configured by the environment (docs/operations.md, "Device simulator").
const { values } = parseArgs({ options: { protocol: { type: 'string' } } });
const config = loadConfigOrExit(DeviceSimConfigSchema, { ...process.env, ...(values.protocol !== undefined && { SIM_PROTOCOL: values.protocol }) });
const log = pino({ level: config.LOG_LEVEL, base: { service: 'device-sim', pid: process.pid, protocol: config.SIM_PROTOCOL } }, logStream(config.LOG_FORMAT));

/** The simulated phones of each device protocol (a protocol without them does not compile). */
const SIMULATORS: Record<DeviceProtocol, (config: DeviceSimConfig, log: Logger) => Promise<DeviceSim[]>> = {
  native: async (config, log) => {
    if (!config.DEVICE_TOKEN) {
      console.error('DEVICE_TOKEN is not set: SIM_PROTOCOL=native needs it, one device token or several separated by commas.');
      process.exit(1);
    }
    // One simulated phone per token, all in this process.
    return Promise.all(config.DEVICE_TOKEN.split(',').map((token, device) => startDeviceSim({ ...config, DEVICE_TOKEN: token }, log.child({ device }))));
  },
  sms_gate: (config, log) =>
    startSmsGatePhones(config, log).catch((error: unknown) => {
      console.error(`Cannot start SMS Gate phones: ${(error as Error).message}`);
      process.exit(1);
    }),
};

const sims = await SIMULATORS[protocolOfSlug(config.SIM_PROTOCOL)](config, log);

// Once, however many signals arrive (Ctrl-C sends SIGINT to `./pnpmw start` and its children alike).
let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    Promise.all(sims.map((sim) => sim.close())).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
