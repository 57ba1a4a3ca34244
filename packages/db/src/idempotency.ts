import type { Db } from './client.ts';
import type { Tx } from './transaction.ts';
import { sameHash } from './secrets.ts';

/**
 * Idempotency-Key records. The first request with a key claims it; the same key and body within the
 * retention window replays the stored response; another body is a misuse. A claim whose request died
 * before completing is taken over after `abandonAfterMs`.
 */
export type IdempotencyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'replay'; code: number; body: unknown }
  | { outcome: 'mismatch' }
  | { outcome: 'in_flight'; claimedAt: Date };

export interface ClaimOptions {
  userId: string;
  key: string;
  requestHash: Uint8Array<ArrayBuffer>;
  now: Date;
  retentionMs: number;
  abandonAfterMs: number;
}

export async function claimIdempotencyKey(db: Db, o: ClaimOptions): Promise<IdempotencyClaim> {
  const expiredBefore = new Date(o.now.getTime() - o.retentionMs);
  const abandonedBefore = new Date(o.now.getTime() - o.abandonAfterMs);
  // Insert, or take over a record that expired or whose request was abandoned, in one statement.
  const claimed = await db.$queryRaw<{ key: string }[]>`
    INSERT INTO idempotency_keys (user_id, key, request_hash, created_at)
    VALUES (${o.userId}::uuid, ${o.key}, ${o.requestHash}, ${o.now})
    ON CONFLICT (user_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
          completed_at = NULL, response_code = NULL, response_body = NULL
      WHERE idempotency_keys.created_at < ${expiredBefore}
         OR (idempotency_keys.completed_at IS NULL AND idempotency_keys.created_at < ${abandonedBefore})
    RETURNING key`;
  if (claimed.length === 1) return { outcome: 'claimed' };

  const existing = await db.idempotencyKey.findUnique({
    where: { userId_key: { userId: o.userId, key: o.key } },
    select: { requestHash: true, completedAt: true, responseCode: true, responseBody: true, createdAt: true },
  });
  if (!existing) return claimIdempotencyKey(db, o); // released meanwhile
  if (!sameHash(existing.requestHash, o.requestHash)) return { outcome: 'mismatch' };
  if (!existing.completedAt || existing.responseCode === null) return { outcome: 'in_flight', claimedAt: existing.createdAt };
  return { outcome: 'replay', code: existing.responseCode, body: existing.responseBody };
}

/** Stores the response, inside the transaction that stores the messages, so both commit together. */
export async function completeIdempotencyKey(
  tx: Tx,
  options: { userId: string; key: string; code: number; body: object; now: Date },
): Promise<void> {
  await tx.idempotencyKey.update({
    where: { userId_key: { userId: options.userId, key: options.key } },
    data: { completedAt: options.now, responseCode: options.code, responseBody: options.body },
  });
}

/** Frees a claim whose request was refused, so that a corrected retry with the same key is evaluated anew. */
export async function releaseIdempotencyKey(db: Db, options: { userId: string; key: string }): Promise<void> {
  await db.idempotencyKey.deleteMany({ where: { userId: options.userId, key: options.key, completedAt: null } });
}
