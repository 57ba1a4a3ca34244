import { subscribableNodes } from './connection.ts';
import type { RedisClient } from './topology.ts';

/**
 * A user's live events (`GET /api/v1/events`): the dispatchers and the API publish them through
 * one Redis pub/sub channel per user, one message per batch of changes, never one per message. An
 * API process subscribes to a user's channel while it holds one of the user's streams, so that it
 * never reads the events of users it serves no stream to, and publishers that must read Postgres to
 * build the events first ask which users listen at all (`usersListening`): with no stream open,
 * status changes cost no read. They are hints: a client re-reads what it shows when its stream
 * (re)opens, which happens after the subscription, so nothing committed before it is missed.
 */
export function userEventsChannel(prefix: string, userId: string): string {
  return `${userEventsPrefix(prefix)}${userId}`;
}

function userEventsPrefix(prefix: string): string {
  return `${prefix}:user-events:`;
}

/**
 * The users with at least one open event stream on any API process: one PUBSUB CHANNELS. A node of
 * a cluster lists only the subscriptions of its own clients, so there every node is asked; a node
 * that cannot answer (failing over) is left out, its subscribers being on their way to another.
 */
export async function usersListening(redis: RedisClient, prefix: string): Promise<Set<string>> {
  const base = userEventsPrefix(prefix);
  const pattern = `${base.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const answers = await Promise.allSettled(subscribableNodes(redis).map((node) => node.pubsub('CHANNELS', pattern) as Promise<string[]>));
  const lists = answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
  if (lists.length === 0) throw (answers[0] as PromiseRejectedResult | undefined)?.reason ?? new Error('no Redis node to ask');
  return new Set(lists.flat().map((channel) => channel.slice(base.length)));
}

/**
 * The data of an event: for `message.status`, the message's id, status, state, batch_id,
 * device_id, error and timestamps (`StatusEventData` of @smsgw/core, published by @smsgw/db's `announceTransitions`);
 * for `sms.received`, the public received record. Documented in the route (GET /api/v1/events).
 */
export type UserEventData = { id: string } & Record<string, unknown>;
export type UserEventType = 'message.status' | 'sms.received';

/** One event of a user: a message's new status, or an SMS a device received. */
export interface UserEvent {
  type: UserEventType;
  data: UserEventData;
}

/** What travels on the channel: the events of one user. */
export interface UserEventBatch {
  user_id: string;
  events: UserEvent[];
}

/** Publishes the events, one message per user on the user's channel (in one round trip). */
export async function publishUserEvents(redis: RedisClient, prefix: string, events: { userId: string; event: UserEvent }[]): Promise<void> {
  if (events.length === 0) return;
  const byUser = new Map<string, UserEvent[]>();
  for (const { userId, event } of events) byUser.set(userId, [...(byUser.get(userId) ?? []), event]);
  const pipeline = redis.pipeline();
  for (const [userId, list] of byUser)
    pipeline.publish(userEventsChannel(prefix, userId), JSON.stringify({ user_id: userId, events: list } satisfies UserEventBatch));
  await pipeline.exec();
}

/** A message of the channel, or null when it is not one (another version's, or garbage). */
export function parseUserEventBatch(text: string): UserEventBatch | null {
  try {
    const value = JSON.parse(text) as Partial<UserEventBatch>;
    return typeof value.user_id === 'string' && Array.isArray(value.events) ? (value as UserEventBatch) : null;
  } catch {
    return null;
  }
}
