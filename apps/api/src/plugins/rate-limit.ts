import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { AppError } from '@smsgw/core';
import { rateLimitKey } from './auth.ts';

/**
 * Requests per minute per credential (per address without one), counted in Redis so that every API
 * process shares the budget. If Redis is away the limit is skipped rather than failing requests.
 */
export const rateLimits = fp(
  async (app: FastifyInstance) => {
    await app.register(rateLimit, {
      max: app.config.RATE_LIMIT_PER_MINUTE,
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
