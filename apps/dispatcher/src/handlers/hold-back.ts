import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { queueDeadline } from '@smsgw/core';
import { EXPIRED_BEFORE_SENT, failMessages, type PendingMessage, type Sql } from '@smsgw/db/sql';
import type { WebhooksQueue } from '@smsgw/queue';
import { enqueueDeliveries } from './enqueue-deliveries.ts';
import { publishStatus } from './publish-status.ts';

export interface HoldBackDeps {
  sql: Sql;
  redis: Redis;
  webhooksQueue: WebhooksQueue;
  config: { QUEUE_PREFIX: string; MAX_QUEUE_SECONDS: number };
  log: Logger;
}

/**
 * The pending messages that may go to a device now (decisions.md, "Scheduled sends and validity"):
 * one not yet due (its job ran early) waits until its send_at, one past its queue deadline (its
 * valid_until, else MAX_QUEUE_SECONDS from when it was due) fails as expired. `held` has the
 * outcome of each message held back. The assignment statement checks both
 * again, so a message slipping past here is still never assigned.
 */
export async function holdBack(
  deps: HoldBackDeps,
  pending: PendingMessage[],
  now: Date,
): Promise<{ ready: PendingMessage[]; held: Map<string, 'failed' | { waitMs: number }> }> {
  const expired = pending.filter((m) => queueDeadline(m, deps.config.MAX_QUEUE_SECONDS) <= now);
  const failed = await failMessages(deps.sql, { ids: expired.map((m) => m.id), now, from: ['pending'], error: EXPIRED_BEFORE_SENT });
  await enqueueDeliveries(deps.webhooksQueue, deps.log, failed.deliveries);
  await publishStatus(deps, failed.moved);

  const held = new Map<string, 'failed' | { waitMs: number }>(failed.moved.map((id) => [id, 'failed']));
  const ready = pending.filter((m) => !expired.includes(m));
  for (const m of ready) if (m.sendAt !== null && m.sendAt > now) held.set(m.id, { waitMs: m.sendAt.getTime() - now.getTime() });
  return { ready: ready.filter((m) => !held.has(m.id)), held };
}
