import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '@smsgw/core';
import { IDEMPOTENCY_KEY_RETENTION_MS, amendIdempotencyResponse, lookupIdempotencyKey, recordIdempotencyKey, type Queryable } from '@smsgw/db';

const MAX_KEY_LENGTH = 255;
const KEY_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${MAX_KEY_LENGTH}}$`);

/** Stores the request's key with its response, in the transaction that stores its work. */
export interface IdempotencyRecorder {
  record(client: Queryable, body: object): Promise<void>;
  /** Replaces the recorded response, in the same transaction (once the work completed it). */
  amend(client: Queryable, body: object): Promise<void>;
}

/** Thrown inside the transaction when another request with the key committed first: it rolls back. */
class KeyTaken extends Error {}

/**
 * Runs `handler` under the request's Idempotency-Key, if it has one: the same key and body within
 * 24 hours replays the first response, another body is 422. The handler stores the key with its
 * response in its own transaction (`recorder.record`), so a request that fails or dies leaves no
 * trace and its retry is taken at once; of concurrent duplicates one does the work and the others
 * replay its response.
 */
export async function withIdempotencyKey<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  handler: (recorder: IdempotencyRecorder | undefined) => Promise<T>,
): Promise<T> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return handler(undefined);
  const key = Array.isArray(header) ? header[0] : header;
  if (!key || !KEY_PATTERN.test(key)) {
    throw new AppError('invalid_request', `Invalid header 'Idempotency-Key': 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`);
  }
  const { sql } = request.server;
  const requestHash = new Uint8Array(
    createHash('sha256')
      .update(request.routeOptions.url ?? '')
      .update('\n')
      .update(JSON.stringify(request.body))
      .digest(),
  );
  const options = { userId: request.auth.user.id, key, requestHash, retentionMs: IDEMPOTENCY_KEY_RETENTION_MS };
  const earlier = async () => {
    const found = await lookupIdempotencyKey(sql, { ...options, now: new Date() });
    if (found.outcome === 'mismatch') throw new AppError('idempotency_key_reused');
    if (found.outcome === 'new') return undefined;
    reply.header('idempotency-replayed', 'true').status(found.code);
    // The stored body is the response this handler gave to the first request.
    return { body: found.body as T };
  };

  const before = await earlier();
  if (before) return before.body;
  try {
    return await handler({
      async record(client, body) {
        if (!(await recordIdempotencyKey(client, { ...options, now: new Date(), code: 200, body }))) throw new KeyTaken();
      },
      async amend(client, body) {
        await amendIdempotencyResponse(client, { userId: options.userId, key, body });
      },
    });
  } catch (error) {
    if (!(error instanceof KeyTaken)) throw error;
    const after = await earlier();
    if (after) return after.body;
    // The first request's key expired or was purged in between: rare enough to ask for a retry.
    throw new AppError('idempotency_key_in_use', undefined, { retryAfterSeconds: 1 });
  }
}
