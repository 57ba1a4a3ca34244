import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '@smsgw/core';
import { IDEMPOTENCY_KEY_RETENTION_MS, claimIdempotencyKey, releaseIdempotencyKey } from '@smsgw/db';

// A claim older than this whose request never completed is taken to be abandoned (a crashed process).
const ABANDON_AFTER_MS = 60 * 1000;
const MAX_KEY_LENGTH = 255;
const KEY_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${MAX_KEY_LENGTH}}$`);

/**
 * Runs `handler` under the request's Idempotency-Key, if it has one: the same key and body within
 * 24 hours replays the first response, another body is 422, a request still in flight is 409. The
 * handler completes the key in its own transaction; a refused request releases it.
 */
export async function withIdempotencyKey<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  handler: (key: string | undefined) => Promise<T>,
): Promise<T> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return handler(undefined);
  const key = Array.isArray(header) ? header[0] : header;
  if (!key || !KEY_PATTERN.test(key)) {
    throw new AppError('invalid_request', `Invalid header 'Idempotency-Key': 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`);
  }
  const { db } = request.server;
  const userId = request.auth.user.id;
  const requestHash = new Uint8Array(
    createHash('sha256').update(request.routeOptions.url ?? '').update('\n').update(JSON.stringify(request.body)).digest(),
  );
  const claim = await claimIdempotencyKey(db, {
    userId, key, requestHash, now: new Date(), retentionMs: IDEMPOTENCY_KEY_RETENTION_MS, abandonAfterMs: ABANDON_AFTER_MS,
  });
  switch (claim.outcome) {
    case 'mismatch':
      throw new AppError('idempotency_key_reused');
    case 'in_flight': {
      // When the first request completes, or at the latest when its claim counts as abandoned.
      const retryAfterSeconds = Math.max(1, Math.ceil((claim.claimedAt.getTime() + ABANDON_AFTER_MS - Date.now()) / 1000));
      throw new AppError('idempotency_key_in_use', undefined, { retryAfterSeconds });
    }
    case 'replay':
      reply.header('idempotency-replayed', 'true').status(claim.code);
      // The stored body is the response this handler gave to the first request.
      return claim.body as T;
    case 'claimed':
      try {
        return await handler(key);
      } catch (error) {
        await releaseIdempotencyKey(db, { userId, key });
        throw error;
      }
  }
}
