import type { MessageState } from '@smsgw/core';
import type { Db } from './client.ts';

export interface MessageEventRow {
  state: MessageState;
  deviceId: string | null;
  detail: string | null;
  at: Date;
}

/** The states a message went through after it was stored (assigned, sending, sent, …), oldest first. */
export async function listMessageEvents(db: Db, messageId: string): Promise<MessageEventRow[]> {
  return db.messageEvent.findMany({
    where: { messageId },
    orderBy: [{ at: 'asc' }, { id: 'asc' }],
    select: { state: true, deviceId: true, detail: true, at: true },
  });
}
