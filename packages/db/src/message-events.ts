import type { MessageState } from '@smsgw/core';
import type { SqlPool } from './sql.ts';

export interface MessageEventRow {
  state: MessageState;
  deviceId: string | null;
  detail: string | null;
  at: Date;
}

/** The states a message went through after it was stored (assigned, sending, sent, …), oldest first. */
export async function listMessageEvents(sql: SqlPool, messageId: string): Promise<MessageEventRow[]> {
  const { rows } = await sql.query<MessageEventRow>(
    'SELECT state::text AS state, device_id AS "deviceId", detail, at FROM message_events WHERE message_id = $1 ORDER BY at, id',
    [messageId],
  );
  return rows;
}
