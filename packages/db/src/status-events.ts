import { statusFromRow, toStatusEvent, type StatusColumns, type StatusEventData } from '@smsgw/core';
import type { Sql } from './sql.ts';

/** A message as a `message.status` event shows it (documented by GET /api/v1/events; mapped in @smsgw/core's message-record.ts). */
export type { StatusEventData };

/**
 * The messages of `ids` as they are now, with their users, for the users' live events: one read
 * by primary key after a statement moved them (the statements themselves stay as they are).
 * `users` keeps only the messages of those users (the ones with a stream open).
 */
export async function loadStatusEvents(sql: Sql, ids: readonly string[], users?: Iterable<string>): Promise<{ userId: string; data: StatusEventData }[]> {
  const only = users === undefined ? null : [...users];
  if (ids.length === 0 || only?.length === 0) return [];
  const { rows } = await sql.query<StatusColumns & { user_id: string }>(
    `SELECT id, user_id, state, batch_id, device_id, requested_device_id, error, created_at, updated_at, sent_at, delivered_at, failed_at
     FROM messages WHERE id = ANY($1::uuid[]) AND ($2::uuid[] IS NULL OR user_id = ANY($2::uuid[]))`,
    [[...new Set(ids)], only],
  );
  return rows.map((row) => ({ userId: row.user_id, data: toStatusEvent(statusFromRow(row)) }));
}
