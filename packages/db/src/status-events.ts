import { statusOf, type MessageState, type MessageStatus } from '@smsgw/core';
import type { Sql } from './sql.ts';

/** A message as a `message.status` event shows it (documented by GET /api/v1/events). A type, not an interface: it is a record of strings. */
export type StatusEventData = {
  id: string;
  status: MessageStatus;
  state: MessageState;
  batch_id: string | null;
  device_id: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
};

/**
 * The messages of `ids` as they are now, with their users, for the users' live events: one read
 * by primary key after a statement moved them (the statements themselves stay as they are).
 * `users` keeps only the messages of those users (the ones with a stream open).
 */
export async function loadStatusEvents(sql: Sql, ids: string[], users?: Iterable<string>): Promise<{ userId: string; data: StatusEventData }[]> {
  const only = users === undefined ? null : [...users];
  if (ids.length === 0 || only?.length === 0) return [];
  const { rows } = await sql.query<{
    id: string; user_id: string; state: MessageState; batch_id: string | null; device_id: string | null; error: string | null;
    created_at: Date; updated_at: Date; sent_at: Date | null; delivered_at: Date | null; failed_at: Date | null;
  }>(
    `SELECT id, user_id, state, batch_id, coalesce(device_id, requested_device_id) AS device_id, error,
            created_at, updated_at, sent_at, delivered_at, failed_at
     FROM messages WHERE id = ANY($1::uuid[]) AND ($2::uuid[] IS NULL OR user_id = ANY($2::uuid[]))`,
    [[...new Set(ids)], only],
  );
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return rows.map((r) => ({
    userId: r.user_id,
    data: {
      id: r.id, status: statusOf(r.state), state: r.state, batch_id: r.batch_id, device_id: r.device_id, error: r.error,
      created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
      sent_at: iso(r.sent_at), delivered_at: iso(r.delivered_at), failed_at: iso(r.failed_at),
    },
  }));
}
