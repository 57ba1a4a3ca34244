import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { duplicateConnection, type RedisClient, onRedisError } from '@smsgw/queue';
import { normalizeIP } from '@fastify/rate-limit';
import { AppError } from '@smsgw/core';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The Redis connection of the counters that fail open (rate limits, failed authentications):
     * each command gives up after RATE_LIMIT_TIMEOUT_MS, so a stalled Redis cannot hold requests.
     */
    limiterRedis: RedisClient;
    /**
     * Runs a credential check (`verify` answers null for a refused credential). A refusal counts
     * against the client address and is a 401, or a 429 once the address has had more than
     * AUTH_FAILURES_PER_MINUTE refusals this minute.
     */
    verifyCredential: <T>(request: FastifyRequest, verify: () => Promise<T | null>) => Promise<T>;
  }
}

const WINDOW_MS = 60_000;

// One command, so that the counter never lives without its expiry: the count and the milliseconds left.
const COUNT_FAILURE = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

type CountingRedis = RedisClient & {
  countAuthFailure(key: string, windowMs: number): Promise<[number, number]>;
};

/** The address that failures are counted against: IPv4, or the /64 of an IPv6 address (one host's share). */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * Throttles clients that keep presenting refused credentials: refusals are counted per client
 * address in Redis, shared by every API process, in windows of a minute from the first refusal;
 * past the limit a refusal is answered 429 with Retry-After, which well-behaved clients back off on.
 * Valid credentials are always served and cost no Redis command: many phones behind one carrier NAT
 * share an address, and one of them with a revoked token must not lock the others out. Guessing is
 * not what this stops: keys and tokens carry 256 random bits, and the 8-digit pairing codes have a
 * limit of their own. If Redis is away or slow the counter is skipped, never the request.
 */
export const authFailures = fp(
  async (app: FastifyInstance) => {
    const { AUTH_FAILURES_PER_MINUTE: limit, RATE_LIMIT_TIMEOUT_MS, QUEUE_PREFIX } = app.config;
    const redis = duplicateConnection(app.redis, {
      commandTimeout: RATE_LIMIT_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    }) as CountingRedis;
    onRedisError(redis, 'rate-limit Redis connection failed', (what, error) => app.incidents.report(what, error));
    redis.defineCommand('countAuthFailure', { numberOfKeys: 1, lua: COUNT_FAILURE });
    await redis.connect();
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    app.decorate<RedisClient>('limiterRedis', redis);

    const keyOf = (request: FastifyRequest) => `${QUEUE_PREFIX}:auth-failures:${clientAddress(request)}`;
    const skipped = (_request: FastifyRequest, error: unknown) =>
      app.incidents.report('failed-authentication counter unavailable: not counted until Redis answers', error);

    /** Counts a refusal; the seconds until the address's window ends once it is over the limit, else null (or when Redis cannot say). */
    async function countFailure(request: FastifyRequest): Promise<number | null> {
      try {
        const [count, ttl] = await redis.countAuthFailure(keyOf(request), WINDOW_MS);
        return count > limit && ttl > 0 ? Math.ceil(ttl / 1000) : null;
      } catch (error) {
        skipped(request, error);
        return null;
      }
    }

    app.decorate('verifyCredential', async <T>(request: FastifyRequest, verify: () => Promise<T | null>): Promise<T> => {
      const found = await verify();
      if (found !== null) return found;
      const retryAfterSeconds = await countFailure(request);
      if (retryAfterSeconds === null) throw new AppError('unauthorized');
      throw new AppError('rate_limited', `Too many failed authentications from this address: retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
    });
  },
  { name: 'auth-failures', dependencies: ['resources'] },
);
