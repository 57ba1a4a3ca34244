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

/** Deletes up to `limit` rows of SMS Gate tokens that expired before `expiredBefore` (their JWTs are refused by `exp` already); returns how many. */
export async function purgeScopedTokens(sql: Sql, options: { expiredBefore: Date; limit: number }): Promise<number> {
  const { rowCount } = await sql.query(
    `DELETE FROM scoped_tokens WHERE id IN (SELECT id FROM scoped_tokens WHERE expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [options.expiredBefore, options.limit],
  );
  return rowCount ?? 0;
}

/**
 * Deletes up to `limit` final (delivered, failed or cancelled) messages whose last change is older than
 * `finishedBefore`, with their history, and each of their batches and callbacks that has no message
 * left, in one statement. A message still moving is never taken: only final states, and SKIP LOCKED leaves
 * rows a report holds. (A data-modifying CTE's deletions are invisible to the rest of its statement,
 * hence the batch test leaves out the doomed messages by id.)
 */
export async function purgeMessages(sql: Sql, options: { finishedBefore: Date; limit: number }): Promise<number> {
  const { rows } = await sql.query<{ deleted: number }>(
    `WITH doomed AS (
       SELECT id, batch_id, callback_id FROM messages
        WHERE state IN ('delivered', 'failed', 'cancelled') AND updated_at < $1
        LIMIT $2 FOR UPDATE SKIP LOCKED
     ), history AS (
       DELETE FROM message_events WHERE message_id IN (SELECT id FROM doomed)
     ), gone AS (
       DELETE FROM messages WHERE id IN (SELECT id FROM doomed) RETURNING id
     ), emptied AS (
       DELETE FROM batches b
        WHERE b.id IN (SELECT DISTINCT batch_id FROM doomed WHERE batch_id IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.batch_id = b.id AND m.id NOT IN (SELECT id FROM doomed))
     ), released AS (
       DELETE FROM message_callbacks c
        WHERE c.id IN (SELECT DISTINCT callback_id FROM doomed WHERE callback_id IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.callback_id = c.id AND m.id NOT IN (SELECT id FROM doomed))
     )
     SELECT count(*)::int AS deleted FROM gone`,
    [options.finishedBefore, options.limit],
  );
  return rows[0]!.deleted;
}

/** Deletes up to `limit` message events recorded before `before` (the history of messages kept longer). */
export async function purgeMessageEvents(sql: Sql, options: { before: Date; limit: number }): Promise<number> {
  const { rowCount } = await sql.query(`DELETE FROM message_events WHERE id IN (SELECT id FROM message_events WHERE at < $1 LIMIT $2)`, [
    options.before,
    options.limit,
  ]);
  return rowCount ?? 0;
}

/**
 * Deletes up to `limit` incoming SMS stored before `createdBefore`, each with its Twilio callback
 * (and so that callback's delivery); returns how many SMS.
 */
export async function purgeReceivedMessages(sql: Sql, options: { createdBefore: Date; limit: number }): Promise<number> {
  const { rows } = await sql.query<{ deleted: number }>(
    `WITH gone AS (
       DELETE FROM received_messages WHERE id IN (SELECT id FROM received_messages WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING callback_id
     ), released AS (
       DELETE FROM message_callbacks WHERE id IN (SELECT callback_id FROM gone WHERE callback_id IS NOT NULL)
     )
     SELECT count(*)::int AS deleted FROM gone`,
    [options.createdBefore, options.limit],
  );
  return rows[0]!.deleted;
}
