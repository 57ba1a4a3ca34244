import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { AppError } from '@smsgw/core';
import { rateLimitKey } from './auth.ts';

/**
 * Requests per minute per credential (per address without one), counted in Redis so that every API
 * process shares the budget. If Redis is away the limit is skipped rather than failing requests.
 * A device has a budget of its own, far larger: its requests follow the messages its user sends
 * (an SMS Gate phone makes about three per message), and a phone refused its state reports would
 * drop them after its retries, so its limit only stops a runaway.
 */
export const rateLimits = fp(
  async (app: FastifyInstance) => {
    await app.register(rateLimit, {
      max: (_request, key) => (key.startsWith('device:') ? app.config.DEVICE_RATE_LIMIT_PER_MINUTE : app.config.RATE_LIMIT_PER_MINUTE),
      timeWindow: 60_000,
      redis: app.redis,
      nameSpace: `${app.config.QUEUE_PREFIX}:rate-limit:`,
      skipOnError: true,
      keyGenerator: rateLimitKey,
      errorResponseBuilder: (_request, context) => {
        const error = new AppError('rate_limited', `Too many requests: at most ${context.max} per minute, retry in ${context.after}.`);
        return error;
      },
    });
  },
  { name: 'rate-limit', dependencies: ['resources'] },
);
