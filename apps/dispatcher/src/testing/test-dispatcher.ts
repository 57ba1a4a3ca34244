import { pino } from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestApi, type TestApi } from '@smsgw/api/testing';
import { DispatcherConfigSchema, loadConfig, type ApiConfig } from '@smsgw/config';
import { startDispatcher, type Dispatcher, type DispatcherOptions } from '../dispatcher.ts';

/**
 * A dispatcher in this process, on the database and queue prefix of a test API. `env` overrides
 * the dispatcher's settings (lease lengths, sweep interval, ...); `options` its webhook resolver.
 */
export function startTestDispatcher(api: { config: ApiConfig }, env: Record<string, string> = {}, options: DispatcherOptions = {}): Promise<Dispatcher> {
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

/**
 * The hooks a dispatcher test file needs: one test API for the file, and the dispatchers each test
 * starts with `start` (on that API, with `env`), closed after the test.
 */
export function useDispatcherTestApi(): { readonly api: TestApi; start(env?: Record<string, string>): Promise<Dispatcher> } {
  let api: TestApi | undefined;
  const running: Dispatcher[] = [];
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.close()));
  });
  afterAll(async () => {
    await api?.close();
  });
  return {
    get api() {
      if (!api) throw new Error('the test API starts in beforeAll');
      return api;
    },
    async start(env = {}) {
      const dispatcher = await startTestDispatcher(this.api, env);
      running.push(dispatcher);
      return dispatcher;
    },
  };
}
