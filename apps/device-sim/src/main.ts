import { pino } from 'pino';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import { startDeviceSim } from './device-sim.ts';

// `pnpm start:device-sim`: one simulated phone, configured by the environment (README).
const config = loadConfig(DeviceSimConfigSchema);
const log = pino({ level: config.LOG_LEVEL, base: { service: 'device-sim', pid: process.pid } });
// One simulated phone per token, all in this process.
const sims = await Promise.all(
  config.DEVICE_TOKEN.split(',').map((token, device) => startDeviceSim({ ...config, DEVICE_TOKEN: token }, log.child({ device }))),
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    Promise.all(sims.map((sim) => sim.close())).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
