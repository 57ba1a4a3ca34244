import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { loadStatusEvents, type Sql } from '@smsgw/db/sql';
import { publishUserEvents, usersListening } from '@smsgw/queue';

export interface PublishStatusDeps {
  sql: Sql;
  redis: Redis;
  config: { QUEUE_PREFIX: string };
  log: Logger;
}

/**
 * Tells the users' open event streams that these messages changed status: one publish per user
 * for the batch, and no read of Postgres when none of them has a stream open. Best effort: the change is committed, and a client re-reads on reconnect, so a
 * failure is only logged.
 */
export async function publishStatus(deps: PublishStatusDeps, messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  try {
    const listening = await usersListening(deps.redis, deps.config.QUEUE_PREFIX);
    if (listening.size === 0) return;
    const changes = await loadStatusEvents(deps.sql, messageIds, listening);
    await publishUserEvents(deps.redis, deps.config.QUEUE_PREFIX, changes.map(({ userId, data }) => ({ userId, event: { type: 'message.status', data } })));
  } catch (error) {
    deps.log.warn({ err: error, count: messageIds.length }, 'publishing message status events failed');
  }
}
