import { inHandSql, neverHandedSql, unclaimedSql } from '@smsgw/core';
import type { Sql } from './sql.ts';

/**
 * Lease expiry (docs/devices.md, "Delivery"). Each function handles at most `limit` messages per
 * call. Only messages never offered to their device move or expire by these; an offered message
 * stays with its device until it reports or its offer lapses.
 */
// The message's device took nothing since the lease began ($1): it went away, or it is stuck. A
// device that takes messages keeps its queue, however long (a phone works through it at its pace).
const NOT_TAKING = '(d.offered_at IS NULL OR d.offered_at < $1)';

/**
 * The statement that moves the assigned messages `picked` selects (their `m.id`, locked `FOR
 * UPDATE OF m SKIP LOCKED`) back to `pending` while they are still unclaimed, with an event that
 * says why (`detail`, an SQL string literal); `now` is the parameter holding the time. It returns
 * the moved ids. The sweep's two releases (not taken in time here, device unavailable in
 * failover.ts) differ only in what they pick.
 */
export function releaseToPendingStatement(picked: string, now: string, detail: string): string {
  return `WITH picked AS (${picked}), moved AS (
       UPDATE messages m SET state = 'pending', updated_at = ${now}
       FROM picked WHERE m.id = picked.id AND ${unclaimedSql('m')}
       RETURNING m.id, m.device_id
     ), history AS (
       INSERT INTO message_events (message_id, state, device_id, at, detail)
       SELECT id, 'pending', device_id, ${now}, ${detail} FROM moved
     )
     SELECT id FROM moved`;
}

/**
 * Assigned messages never offered, past the assignment lease, of a device that is not taking
 * messages: back to `pending` (and to round-robin), at most `maxAssignments` times.
 */
export async function releaseUnclaimed(sql: Sql, options: { assignedBefore: Date; maxAssignments: number; limit: number; now: Date }): Promise<string[]> {
  const { assignedBefore, maxAssignments, limit, now } = options;
  const { rows } = await sql.query<{ id: string }>(
    releaseToPendingStatement(
      `SELECT m.id FROM messages m JOIN devices d ON d.id = m.device_id
       WHERE ${unclaimedSql('m')} AND m.assigned_at < $1 AND m.requested_device_id IS NULL AND m.assignments < $2
         AND ${NOT_TAKING}
       ORDER BY m.assigned_at LIMIT $3 FOR UPDATE OF m SKIP LOCKED`,
      '$4',
      `'Not taken by the device in time; assigned again.'`,
    ),
    [assignedBefore, maxAssignments, limit, now],
  );
  return rows.map((r) => r.id);
}

/** Assigned messages past their lease, never offered, of a device not taking messages, that may not move (out of assignments). */
export async function unclaimedExhausted(sql: Sql, options: { assignedBefore: Date; maxAssignments: number; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT m.id FROM messages m JOIN devices d ON d.id = m.device_id
     WHERE ${unclaimedSql('m')} AND m.assigned_at < $1 AND m.requested_device_id IS NULL AND m.assignments >= $2
       AND ${NOT_TAKING}
     ORDER BY m.assigned_at LIMIT $3`,
    [options.assignedBefore, options.maxAssignments, options.limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Offered messages not yet sent whose `validUntil` (the sending lease from the first offer, the
 * time to live from send_at or creation, or the message's own valid_until) lies before
 * `offeredBefore`/`createdBefore`/`validBefore`: still `assigned` (never acknowledged) or
 * `sending` (no result reported).
 */
export async function lapsedOffers(
  sql: Sql,
  options: { offeredBefore: Date; createdBefore: Date; validBefore: Date; limit: number },
): Promise<{ unacknowledged: string[]; unreported: string[] }> {
  const { rows } = await sql.query<{ id: string; state: 'assigned' | 'sending' }>(
    // The offer too for `sending`: the lease counts from it (a `sending` row never offered, if any, lapses not).
    `SELECT id, state FROM messages
     WHERE ${inHandSql('messages')} AND offered_at IS NOT NULL
       AND (offered_at < $1 OR coalesce(send_at, created_at) < $2 OR valid_until < $4)
     ORDER BY offered_at LIMIT $3`,
    [options.offeredBefore, options.createdBefore, options.limit, options.validBefore],
  );
  return {
    unacknowledged: rows.filter((r) => r.state === 'assigned').map((r) => r.id),
    unreported: rows.filter((r) => r.state === 'sending').map((r) => r.id),
  };
}

const NEVER_HANDED = neverHandedSql('messages');

/**
 * Messages that never reached a device's hands (pending, or assigned and never offered) and were
 * due (their send_at, else their creation) before `createdBefore`.
 */
export async function expiredUnsent(sql: Sql, options: { createdBefore: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages WHERE ${NEVER_HANDED} AND coalesce(send_at, created_at) < $1
     ORDER BY created_at LIMIT $2`,
    [options.createdBefore, options.limit],
  );
  return rows.map((r) => r.id);
}

/** Messages that never reached a device's hands and whose own valid_until is past at `now`. */
export async function pastValidUntil(sql: Sql, options: { now: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages WHERE ${NEVER_HANDED} AND valid_until <= $1
     ORDER BY valid_until LIMIT $2`,
    [options.now, options.limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Devices with messages assigned (offered or not) and not acknowledged since before `before`: a
 * wake-up was lost, or the phone holds them back until a later pull (real-devices.md §2b.5).
 */
export async function devicesWithWaitingOffers(sql: Sql, options: { before: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ device_id: string }>(
    `SELECT DISTINCT device_id FROM messages
     WHERE state = 'assigned' AND updated_at < $1 AND coalesce(offered_at, assigned_at) < $1 AND cancel_requested_at IS NULL
     LIMIT $2`,
    [options.before, options.limit],
  );
  return rows.map((r) => r.device_id);
}

export interface PendingCursor {
  updatedAt: Date;
  id: string;
}

/**
 * Pending messages untouched since `updatedBefore` and due by then (a scheduled one has a delayed
 * job until its send_at), a page at a time after `after`: their job may have been lost (the message
 * row is the outbox).
 */
export async function stalePending(
  sql: Sql,
  options: { updatedBefore: Date; limit: number; after?: PendingCursor },
): Promise<{ ids: string[]; next: PendingCursor | undefined }> {
  const after = options.after ?? { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
  const { rows } = await sql.query<{ id: string; updated_at: Date }>(
    `SELECT id, updated_at FROM messages
     WHERE state = 'pending' AND updated_at < $1 AND (send_at IS NULL OR send_at < $1) AND (updated_at, id) > ($2, $3::uuid)
     ORDER BY updated_at, id LIMIT $4`,
    [options.updatedBefore, after.updatedAt, after.id, options.limit],
  );
  const last = rows.at(-1);
  return {
    ids: rows.map((r) => r.id),
    next: last && rows.length === options.limit ? { updatedAt: last.updated_at, id: last.id } : undefined,
  };
}
