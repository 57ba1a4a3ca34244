import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { describeDisagreement, processSettingsKey, registerProcessSettings } from './process-settings.ts';
import { testPrefixes } from './testing/test-prefixes.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefixes = testPrefixes('settings');
afterAll(async () => {
  await prefixes.remove(redis);
  await redis.quit();
});

const prefix = prefixes.next;
const SETTINGS = { WEBHOOK_ALLOW_PRIVATE: false, SENDING_LEASE_SECONDS: 3600 };

/** Another process's registration, as it would have written it. */
async function other(key: string, name: string, settings: object, at = Date.now()) {
  await redis.hset(key, name, JSON.stringify({ settings, at }));
}

describe('registerProcessSettings', () => {
  it('names each setting in which a live process differs, and nothing when all agree', async () => {
    const p = prefix();
    await other(processSettingsKey(p), 'dispatcher@h:1', { ...SETTINGS, WEBHOOK_ALLOW_PRIVATE: true });
    await other(processSettingsKey(p), 'dispatcher@h:2', SETTINGS);
    const api = await registerProcessSettings(redis, { prefix: p, service: 'api', settings: SETTINGS });
    expect(api.disagreements).toEqual([{ variable: 'WEBHOOK_ALLOW_PRIVATE', here: false, there: true, process: 'dispatcher@h:1' }]);
    expect(describeDisagreement(api.disagreements[0]!)).toBe(
      'WEBHOOK_ALLOW_PRIVATE is false here but true in dispatcher@h:1: set it the same for every API and dispatcher',
    );
    await api.close();

    const agreeing = prefix();
    await other(processSettingsKey(agreeing), 'dispatcher@h:2', SETTINGS);
    const second = await registerProcessSettings(redis, { prefix: agreeing, service: 'api', settings: SETTINGS });
    expect(second.disagreements).toEqual([]);
    await second.close();
  });

  it('forgets a process that stopped refreshing, and removes its own registration on close', async () => {
    const p = prefix();
    const key = processSettingsKey(p);
    await other(key, 'api@h:9', { ...SETTINGS, SENDING_LEASE_SECONDS: 60 }, Date.now() - 5 * 60_000);
    const dispatcher = await registerProcessSettings(redis, { prefix: p, service: 'dispatcher', settings: SETTINGS });
    expect(dispatcher.disagreements).toEqual([]);
    const fields = Object.keys(await redis.hgetall(key));
    expect(fields).toHaveLength(1);
    expect(fields[0]).toMatch(new RegExp(`^dispatcher@.+:${process.pid}$`));

    // The next process compares with this one.
    const api = await registerProcessSettings(redis, { prefix: p, service: 'api', settings: { ...SETTINGS, SENDING_LEASE_SECONDS: 60 } });
    expect(api.disagreements.map((d) => [d.variable, d.here, d.there])).toEqual([['SENDING_LEASE_SECONDS', 60, 3600]]);
    await Promise.all([dispatcher.close(), api.close()]);
    expect(await redis.exists(key)).toBe(0);
  });
});
