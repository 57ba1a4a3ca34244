import type { Sql } from './sql.ts';

/**
 * Lease expiry (decisions.md, "Leases"). Each function handles at most `limit` messages per call,
 * locking them with SKIP LOCKED so that concurrent sweeps never take the same rows.
 */
export async function releaseUnclaimed(
  sql: Sql,
  options: { assignedBefore: Date; maxAssignments: number; limit: number; now: Date },
): Promise<string[]> {
  const { assignedBefore, maxAssignments, limit, now } = options;
  const { rows } = await sql.query<{ id: string }>(
    `WITH picked AS (
       SELECT id FROM messages
       WHERE state = 'assigned' AND assigned_at < $1 AND requested_device_id IS NULL AND assignments < $2
       ORDER BY assigned_at LIMIT $3 FOR UPDATE SKIP LOCKED
     ), moved AS (
       UPDATE messages m SET state = 'pending', updated_at = $4
       FROM picked WHERE m.id = picked.id AND m.state = 'assigned'
       RETURNING m.id, m.device_id
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail)
       SELECT id, 'pending', device_id, $4, 'Not claimed by the device in time; assigned again.' FROM moved
     )
     SELECT id FROM moved`,
    [assignedBefore, maxAssignments, limit, now],
  );
  return rows.map((r) => r.id);
}

/** Assigned messages past their lease that may not move (out of assignments). */
export async function unclaimedExhausted(
  sql: Sql,
  options: { assignedBefore: Date; maxAssignments: number; limit: number },
): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages
     WHERE state = 'assigned' AND assigned_at < $1 AND requested_device_id IS NULL AND assignments >= $2
     ORDER BY assigned_at LIMIT $3`,
    [options.assignedBefore, options.maxAssignments, options.limit],
  );
  return rows.map((r) => r.id);
}

export async function staleSending(sql: Sql, options: { sendingBefore: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages WHERE state = 'sending' AND sending_at < $1 ORDER BY sending_at LIMIT $2`,
    [options.sendingBefore, options.limit],
  );
  return rows.map((r) => r.id);
}

/** Messages created before `createdBefore` that never reached a device's hands (pending or assigned). */
export async function expiredUnsent(sql: Sql, options: { createdBefore: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages WHERE state IN ('pending', 'assigned') AND created_at < $1 ORDER BY created_at LIMIT $2`,
    [options.createdBefore, options.limit],
  );
  return rows.map((r) => r.id);
}

export interface PendingCursor {
  updatedAt: Date;
  id: string;
}

/**
 * Pending messages untouched since `updatedBefore`, a page at a time after `after`: their job may
 * have been lost (the message row is the outbox).
 */
export async function stalePending(
  sql: Sql,
  options: { updatedBefore: Date; limit: number; after?: PendingCursor },
): Promise<{ ids: string[]; next: PendingCursor | undefined }> {
  const after = options.after ?? { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
  const { rows } = await sql.query<{ id: string; updated_at: Date }>(
    `SELECT id, updated_at FROM messages
     WHERE state = 'pending' AND updated_at < $1 AND (updated_at, id) > ($2, $3::uuid)
     ORDER BY updated_at, id LIMIT $4`,
    [options.updatedBefore, after.updatedAt, after.id, options.limit],
  );
  const last = rows.at(-1);
  return {
    ids: rows.map((r) => r.id),
    next: last && rows.length === options.limit ? { updatedAt: last.updated_at, id: last.id } : undefined,
  };
}
