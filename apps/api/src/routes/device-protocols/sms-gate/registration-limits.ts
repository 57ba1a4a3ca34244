import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@smsgw/core';
import { clientAddress } from '../../../plugins/auth-failures.ts';

/**
 * onRequest hook of `POST /device`, after the pairing secret is read: registrations per minute are
 * counted per client address (REGISTRATIONS_PER_MINUTE_PER_ADDRESS: what keeps guessing the 10^8
 * pairing codes slow) and per pairing secret (REGISTRATIONS_PER_MINUTE_PER_PAIRING: one phone or
 * code hammered), in Redis like every rate limit; past either, 429 with Retry-After. The two
 * counters are separate so that a fleet behind one carrier NAT, one pairing each, enrols at the
 * address's pace (docs/decisions.md, "Registration limits"). Redis away: not counted.
 */
export function registrationLimits(app: FastifyInstance) {
  const window = { timeWindow: 60_000, skipOnError: true };
  const perAddress = app.createRateLimit({
    ...window,
    max: app.config.REGISTRATIONS_PER_MINUTE_PER_ADDRESS,
    keyGenerator: (request) => `registration:ip:${clientAddress(request)}`,
  });
  // The secret itself never reaches Redis: its hash names the counter.
  const perPairing = app.createRateLimit({
    ...window,
    max: app.config.REGISTRATIONS_PER_MINUTE_PER_PAIRING,
    keyGenerator: (request) => `registration:pairing:${createHash('sha256').update(request.pairingSecret).digest('base64url')}`,
  });
  return async (request: FastifyRequest): Promise<void> => {
    for (const [limit, what] of [
      [perAddress, 'this address'],
      [perPairing, 'this pairing'],
    ] as const) {
      const counted = await limit(request);
      if (!counted.isAllowed && counted.isExceeded) {
        const retryAfterSeconds = Math.max(1, counted.ttlInSeconds);
        throw new AppError('rate_limited', `Too many registrations from ${what}: at most ${counted.max} per minute, retry in ${retryAfterSeconds} s.`, {
          retryAfterSeconds,
        });
      }
    }
  };
}
