import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { AppError } from '@smsgw/core';
import type { AuthenticatedDevice } from '@smsgw/db';
import type { AuthContext } from './auth.ts';
import { clientAddress } from './auth-failures.ts';
import { RateCounts } from './rate-counts.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The rate limit's counters: a send calls `flush(app.redis)` beside its enqueue (plugins/rate-counts.ts). */
    rateCounts: RateCounts;
  }
}

const WINDOW_MS = 60_000;

/**
 * Whose budget a request spends, known once authentication ran: the user's (whatever key or JWT
 * they use), the device's, or else the client address's.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const auth = request.auth as AuthContext | null;
  if (auth) return `user:${auth.user.id}`;
  const device = request.device as AuthenticatedDevice | null;
  if (device) return `device:${device.id}`;
  return `ip:${clientAddress(request)}`;
}

/**
 * Requests per minute per user, per device, or per address for anonymous routes, counted in Redis
 * so that every API process shares the budget. The limit runs as a preParsing hook: after the
 * onRequest hooks that authenticate (a refused credential is throttled by the failed-authentication
 * counter instead), before the body is read. Its Redis commands give up after
 * RATE_LIMIT_TIMEOUT_MS, and then, as when Redis is away, the request goes on unlimited. Well
 * below the limit a request's count is sent after it, with the send's own Redis round trip
 * (plugins/rate-counts.ts).
 * A device has a budget of its own, far larger: its requests follow the messages its user sends
 * (an SMS Gate phone makes about three per message), and a phone refused its state reports would
 * drop them after its retries, so its limit only stops a runaway. Routes that declare
 * `config: { rateLimit: false }` (health and readiness) are never limited.
 */
export const rateLimits = fp(
  async (app: FastifyInstance) => {
    const counts = new RateCounts({
      redis: app.limiterRedis,
      namespace: `${app.config.QUEUE_PREFIX}:rate-limit:`,
      windowMs: WINDOW_MS,
      onFlushError: (error) => app.incidents.report('rate-limit counts not sent: dropped', error),
    });
    app.decorate('rateCounts', counts);
    await app.register(rateLimit, {
      hook: 'preParsing',
      max: (_request, key) => (key.startsWith('device:') ? app.config.DEVICE_RATE_LIMIT_PER_MINUTE : app.config.RATE_LIMIT_PER_MINUTE),
      timeWindow: WINDOW_MS,
      // One store for every route: the library builds it with `new`, and gets this one.
      store: function store() {
        return counts;
      } as unknown as FastifyRateLimitStoreCtor,
      skipOnError: true,
      keyGenerator: rateLimitKey,
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', `Too many requests: at most ${context.max} per minute, retry in ${context.after}.`),
    });
  },
  { name: 'rate-limit', dependencies: ['resources', 'auth-failures'] },
);
