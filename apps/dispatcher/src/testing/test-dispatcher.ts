import { pino } from 'pino';
import { DispatcherConfigSchema, loadConfig, type ApiConfig } from '@smsgw/config';
import { startDispatcher, type Dispatcher, type DispatcherOptions } from '../dispatcher.ts';

/**
 * A dispatcher in this process, on the database and queue prefix of a test API. `env` overrides
 * the dispatcher's settings (lease lengths, sweep interval, ...); `options` its webhook resolver.
 */
export function startTestDispatcher(
  api: { config: ApiConfig },
  env: Record<string, string> = {},
  options: DispatcherOptions = {},
): Promise<Dispatcher> {
  const config = loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    DEVICE_AVAILABLE_SECONDS: String(api.config.DEVICE_AVAILABLE_SECONDS),
    LOG_LEVEL: 'silent',
    ...env,
  });
  return startDispatcher(config, pino({ level: config.LOG_LEVEL }), options);
}
