import type { Db } from './client.ts';

/**
 * Lease expiry (decisions.md, "Leases"). Each function handles at most `limit` messages per call,
 * locking them with SKIP LOCKED so that concurrent sweeps never take the same rows.
 */
export async function releaseUnclaimed(
  db: Db,
  options: { assignedBefore: Date; maxAssignments: number; limit: number; now: Date },
): Promise<string[]> {
  const { assignedBefore, maxAssignments, limit, now } = options;
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH picked AS (
      SELECT id FROM messages
      WHERE state = 'assigned' AND assigned_at < ${assignedBefore} AND requested_device_id IS NULL AND assignments < ${maxAssignments}
      ORDER BY assigned_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), moved AS (
      UPDATE messages m SET state = 'pending', updated_at = ${now}
      FROM picked WHERE m.id = picked.id AND m.state = 'assigned'
      RETURNING m.id, m.device_id
    ), history AS (
      INSERT INTO message_events (message_id, state, device_id, at, detail)
      SELECT id, 'pending', device_id, ${now}, 'Not claimed by the device in time; assigned again.' FROM moved
    )
    SELECT id FROM moved`;
  return rows.map((r) => r.id);
}

/** Assigned messages past their lease that may not move (out of assignments). */
export async function unclaimedExhausted(
  db: Db,
  options: { assignedBefore: Date; maxAssignments: number; limit: number },
): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM messages
    WHERE state = 'assigned' AND assigned_at < ${options.assignedBefore} AND requested_device_id IS NULL
      AND assignments >= ${options.maxAssignments}
    ORDER BY assigned_at LIMIT ${options.limit}`;
  return rows.map((r) => r.id);
}

export async function staleSending(db: Db, options: { sendingBefore: Date; limit: number }): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM messages WHERE state = 'sending' AND sending_at < ${options.sendingBefore}
    ORDER BY sending_at LIMIT ${options.limit}`;
  return rows.map((r) => r.id);
}

/** Messages created before `createdBefore` that never reached a device's hands (pending or assigned). */
export async function expiredUnsent(db: Db, options: { createdBefore: Date; limit: number }): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM messages WHERE state IN ('pending', 'assigned') AND created_at < ${options.createdBefore}
    ORDER BY created_at LIMIT ${options.limit}`;
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
  db: Db,
  options: { updatedBefore: Date; limit: number; after?: PendingCursor },
): Promise<{ ids: string[]; next: PendingCursor | undefined }> {
  const after = options.after ?? { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
  const rows = await db.$queryRaw<{ id: string; updated_at: Date }[]>`
    SELECT id, updated_at FROM messages
    WHERE state = 'pending' AND updated_at < ${options.updatedBefore} AND (updated_at, id) > (${after.updatedAt}, ${after.id}::uuid)
    ORDER BY updated_at, id LIMIT ${options.limit}`;
  const last = rows.at(-1);
  return {
    ids: rows.map((r) => r.id),
    next: last && rows.length === options.limit ? { updatedAt: last.updated_at, id: last.id } : undefined,
  };
}
