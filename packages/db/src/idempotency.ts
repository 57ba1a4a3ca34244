import type { Queryable } from './sql.ts';
import { sameHash } from './secrets.ts';

/**
 * Idempotency-Key records. A key is stored together with its response, in the transaction that
 * stores the request's messages: so there is never a key without its response. A request that dies
 * before it commits leaves nothing behind, and its retry is taken at once. A concurrent duplicate
 * waits at the key's row until the first commits, then finds it taken (its own transaction rolls
 * back) and replays the first response.
 */
export type IdempotencyLookup = { outcome: 'new' } | { outcome: 'replay'; code: number; body: unknown } | { outcome: 'mismatch' };

export interface KeyOptions {
  userId: string;
  key: string;
  requestHash: Uint8Array<ArrayBuffer>;
  now: Date;
  retentionMs: number;
}

/** What the key holds now: a response to replay, another request's key, or nothing (expired keys count as nothing). */
export async function lookupIdempotencyKey(q: Queryable, o: KeyOptions): Promise<IdempotencyLookup> {
  const { rows } = await q.query<{ requestHash: Buffer; completedAt: Date | null; responseCode: number | null; responseBody: unknown; createdAt: Date }>(
    `SELECT request_hash AS "requestHash", completed_at AS "completedAt", response_code AS "responseCode", response_body AS "responseBody",
            created_at AS "createdAt"
       FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
    [o.userId, o.key],
  );
  const existing = rows[0];
  // A record without a response was left by a request that died under an earlier version: nothing.
  if (!existing || existing.completedAt === null || existing.responseCode === null) return { outcome: 'new' };
  if (existing.createdAt.getTime() < o.now.getTime() - o.retentionMs) return { outcome: 'new' };
  if (!sameHash(existing.requestHash, o.requestHash)) return { outcome: 'mismatch' };
  return { outcome: 'replay', code: existing.responseCode, body: existing.responseBody };
}

/**
 * Stores the key with its response inside the request's transaction, first in it, so that a
 * concurrent duplicate waits here rather than after doing its work. False when another request
 * with the key committed first: the caller rolls its transaction back.
 */
export async function recordIdempotencyKey(q: Queryable, o: KeyOptions & { code: number; body: object }): Promise<boolean> {
  const expiredBefore = new Date(o.now.getTime() - o.retentionMs);
  const { rowCount } = await q.query(
    `INSERT INTO idempotency_keys (user_id, key, request_hash, created_at, completed_at, response_code, response_body)
     VALUES ($1::uuid, $2, $3, $4, $4, $5, $6::jsonb)
     ON CONFLICT (user_id, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, completed_at = EXCLUDED.completed_at,
           response_code = EXCLUDED.response_code, response_body = EXCLUDED.response_body
       WHERE idempotency_keys.created_at < $7 OR idempotency_keys.completed_at IS NULL
     RETURNING key`,
    [o.userId, o.key, Buffer.from(o.requestHash), o.now, o.code, JSON.stringify(o.body), expiredBefore],
  );
  return rowCount === 1;
}

/**
 * Replaces the response of a key this transaction recorded: for a response completed by the
 * statement that followed the key (which recipients of a send opted out).
 */
export async function amendIdempotencyResponse(q: Queryable, o: { userId: string; key: string; body: object }): Promise<void> {
  await q.query(`UPDATE idempotency_keys SET response_body = $3::jsonb WHERE user_id = $1::uuid AND key = $2`, [o.userId, o.key, JSON.stringify(o.body)]);
}
