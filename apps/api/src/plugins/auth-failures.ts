import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { normalizeIP } from '@fastify/rate-limit';
import { AppError } from '@smsgw/core';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The Redis connection of the counters that fail open (rate limits, failed authentications):
     * each command gives up after RATE_LIMIT_TIMEOUT_MS, so a stalled Redis cannot hold requests.
     */
    limiterRedis: Redis;
    /**
     * Runs a credential check (`verify` answers null for a refused credential) unless the client
     * address has had AUTH_FAILURES_PER_MINUTE refusals this minute (429); a refusal counts and is a 401.
     */
    verifyCredential: <T>(request: FastifyRequest, verify: () => Promise<T | null>) => Promise<T>;
  }
}

const WINDOW_MS = 60_000;

// One command, so that the counter never lives without its expiry.
const COUNT_FAILURE = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

interface CountingRedis extends Redis {
  countAuthFailure(key: string, windowMs: number): Promise<number>;
}

/** The address that failures are counted against: IPv4, or the /64 of an IPv6 address (one host's share). */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * Throttles guessing: refused credentials are counted per client address in Redis, shared by every
 * API process, in windows of a minute from the first refusal. Past the limit the address's
 * credentials are not even checked, so that a right guess looks like a wrong one. Accepted
 * credentials never count. If Redis is away or slow the counter is skipped, never the request.
 */
export const authFailures = fp(
  async (app: FastifyInstance) => {
    const { AUTH_FAILURES_PER_MINUTE: limit, RATE_LIMIT_TIMEOUT_MS, QUEUE_PREFIX } = app.config;
    const redis = app.redis.duplicate({
      commandTimeout: RATE_LIMIT_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    }) as CountingRedis;
    redis.on('error', (error: Error) => app.incidents.report('rate-limit Redis connection failed', error));
    redis.defineCommand('countAuthFailure', { numberOfKeys: 1, lua: COUNT_FAILURE });
    await redis.connect();
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    app.decorate('limiterRedis', redis);

    const keyOf = (request: FastifyRequest) => `${QUEUE_PREFIX}:auth-failures:${clientAddress(request)}`;
    const skipped = (_request: FastifyRequest, error: unknown) =>
      app.incidents.report('failed-authentication counter unavailable: not counted until Redis answers', error);

    /** Seconds until the address may try again, or null while it is under the limit (or Redis cannot say). */
    async function lockedFor(request: FastifyRequest): Promise<number | null> {
      try {
        const key = keyOf(request);
        const count = Number(await redis.get(key));
        if (count < limit) return null;
        const ttl = await redis.pttl(key);
        return ttl > 0 ? Math.ceil(ttl / 1000) : null;
      } catch (error) {
        skipped(request, error);
        return null;
      }
    }

    async function countFailure(request: FastifyRequest): Promise<void> {
      try {
        await redis.countAuthFailure(keyOf(request), WINDOW_MS);
      } catch (error) {
        skipped(request, error);
      }
    }

    app.decorate('verifyCredential', async <T>(request: FastifyRequest, verify: () => Promise<T | null>): Promise<T> => {
      const retryAfterSeconds = await lockedFor(request);
      if (retryAfterSeconds !== null) {
        throw new AppError('rate_limited', `Too many failed authentications from this address: retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
      }
      const found = await verify();
      if (found === null) {
        await countFailure(request);
        throw new AppError('unauthorized');
      }
      return found;
    });
  },
  { name: 'auth-failures', dependencies: ['resources'] },
);
