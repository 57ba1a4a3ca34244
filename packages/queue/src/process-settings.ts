import { hostname } from 'node:os';
import type { RedisClient } from './topology.ts';

/**
 * Settings that every API and dispatcher of one gateway must share (an API that accepts a private
 * webhook address that its dispatchers refuse half-fails). Each long-running process registers
 * what it runs with under the queue prefix and, at start, compares with the processes alive now;
 * each difference becomes one log line naming the variable, so a mismatch is loud, not silent. It is
 * not a refusal to start: a rolling change of a setting passes through such a state on purpose.
 */
const REFRESH_MS = 30_000;
/** A registration not refreshed for this long belongs to a process that died without closing. */
const STALE_MS = 3 * REFRESH_MS;

export interface SettingsDisagreement {
  variable: string;
  here: unknown;
  there: unknown;
  /** The other process: `service@host:pid`. */
  process: string;
}

export interface ProcessSettings {
  /** What was found different from the processes alive at registration. */
  disagreements: SettingsDisagreement[];
  /** Stops refreshing and removes the registration. */
  close(): Promise<void>;
}

interface Registration {
  settings: Record<string, unknown>;
  at: number;
}

export function processSettingsKey(prefix: string): string {
  return `${prefix}:processes`;
}

export async function registerProcessSettings(
  redis: RedisClient,
  options: { prefix: string; service: string; settings: Record<string, unknown>; now?: () => number },
): Promise<ProcessSettings> {
  const key = processSettingsKey(options.prefix);
  const now = options.now ?? Date.now;
  const self = `${options.service}@${hostname()}:${process.pid}`;
  const others = await redis.hgetall(key);
  const stale: string[] = [];
  const disagreements: SettingsDisagreement[] = [];
  for (const [name, raw] of Object.entries(others)) {
    if (name === self) continue;
    const other = JSON.parse(raw) as Registration;
    if (now() - other.at > STALE_MS) {
      stale.push(name);
      continue;
    }
    for (const [variable, here] of Object.entries(options.settings)) {
      const there = other.settings[variable];
      if (there !== undefined && JSON.stringify(there) !== JSON.stringify(here)) disagreements.push({ variable, here, there, process: name });
    }
  }
  if (stale.length > 0) await redis.hdel(key, ...stale);
  const refresh = () => redis.hset(key, self, JSON.stringify({ settings: options.settings, at: now() } satisfies Registration));
  await refresh();
  const timer = setInterval(() => void refresh().catch(() => {}), REFRESH_MS).unref();
  return {
    disagreements,
    close: async () => {
      clearInterval(timer);
      await redis.hdel(key, self).catch(() => {});
    },
  };
}

export function describeDisagreement({ variable, here, there, process }: SettingsDisagreement): string {
  return `${variable} is ${JSON.stringify(here)} here but ${JSON.stringify(there)} in ${process}: set it the same for every API and dispatcher`;
}
