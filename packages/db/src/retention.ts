import type { Sql } from './sql.ts';

/**
 * How long records that only serve a while are kept, and their removal by the sweep, a page at a
 * time so that no statement holds many rows at once.
 */

/** An Idempotency-Key replays its first response for 24 hours (decisions.md); after that its row goes. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3600 * 1000;

/** Deletes up to `limit` Idempotency-Key records created before `createdBefore`; returns how many. */
export async function purgeIdempotencyKeys(sql: Sql, options: { createdBefore: Date; limit: number }): Promise<number> {
  const { rowCount } = await sql.query(
    `DELETE FROM idempotency_keys WHERE (user_id, key) IN (
       SELECT user_id, key FROM idempotency_keys WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
     )`,
    [options.createdBefore, options.limit],
  );
  return rowCount ?? 0;
}

/** Deletes up to `limit` finished (succeeded or failed) webhook deliveries created before `createdBefore`. */
export async function purgeWebhookDeliveries(sql: Sql, options: { createdBefore: Date; limit: number }): Promise<number> {
  const { rowCount } = await sql.query(
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries WHERE created_at < $1 AND state <> 'pending' LIMIT $2 FOR UPDATE SKIP LOCKED
     )`,
    [options.createdBefore, options.limit],
  );
  return rowCount ?? 0;
}

/** Deletes up to `limit` device pairings that expired before `expiredBefore`; returns how many. */
export async function purgeDevicePairings(sql: Sql, options: { expiredBefore: Date; limit: number }): Promise<number> {
  const { rowCount } = await sql.query(
    `DELETE FROM device_pairings WHERE id IN (SELECT id FROM device_pairings WHERE expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [options.expiredBefore, options.limit],
  );
  return rowCount ?? 0;
}
