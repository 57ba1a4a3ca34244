import { neverHandedSql } from '@smsgw/core';
import type { Sql } from './sql.ts';

/**
 * The SQL of @smsgw/core's `queueDeadline` for the messages row `m`: its valid_until, else its
 * send_at (or creation) plus `maxQueueSeconds` (the SQL of an integer, or of NULL: no limit but
 * valid_until). NULL means no deadline.
 */
export function queueDeadlineSql(m: string, maxQueueSeconds: string): string {
  return `coalesce(${m}.valid_until, coalesce(${m}.send_at, ${m}.created_at) + make_interval(secs => ${maxQueueSeconds}::int))`;
}

/** The condition that the row `m` may still be handed to a device at `now` (SQL). */
export function beforeQueueDeadline(m: string, maxQueueSeconds: string, now: string): string {
  return `(${queueDeadlineSql(m, maxQueueSeconds)} IS NULL OR ${queueDeadlineSql(m, maxQueueSeconds)} > ${now})`;
}

/**
 * Messages that never reached a device's hands (pending, or assigned and never offered), without a
 * valid_until of their own, that were due (their send_at, else their creation) before `dueBefore`:
 * past MAX_QUEUE_SECONDS when `dueBefore` is now minus it.
 */
export async function pastQueueDeadline(sql: Sql, options: { dueBefore: Date; limit: number }): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM messages
     WHERE ${neverHandedSql('messages')} AND valid_until IS NULL AND coalesce(send_at, created_at) < $1
     ORDER BY created_at LIMIT $2`,
    [options.dueBefore, options.limit],
  );
  return rows.map((r) => r.id);
}
