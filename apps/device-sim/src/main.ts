import { pino } from 'pino';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import { startDeviceSim } from './device-sim.ts';

// `pnpm start:device-sim`: one simulated phone, configured by the environment (README).
const config = loadConfig(DeviceSimConfigSchema);
const log = pino({ level: config.LOG_LEVEL, base: { service: 'device-sim', pid: process.pid } });
const sim = await startDeviceSim(config, log);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
