import type { BurstLog, ReceivedRecord, StatusEventData } from '@smsgw/core';
import type { Sql } from './sql.ts';
import { loadStatusEvents } from './status-events.ts';
import type { DeliveryRef } from './webhook-deliveries.ts';

/** A user's live event (GET /api/v1/events), as @smsgw/queue's `publishUserEvents` takes it. */
export interface LiveEvent {
  userId: string;
  event: { type: 'message.status'; data: StatusEventData } | { type: 'sms.received'; data: ReceivedRecord };
}

/** What a committed transaction changed, to announce. */
export interface Transitions {
  /** The messages it moved: their `message.status` events are read now, for the users with a stream open. */
  moved?: readonly string[];
  /** The webhook deliveries its statements wrote (the rows are their outbox). */
  deliveries?: readonly DeliveryRef[];
  /** Live events known without a read (a send's new messages, the SMS a device received). */
  events?: readonly LiveEvent[];
}

/**
 * What announcing needs besides Postgres: the Redis side as functions of @smsgw/queue (this
 * package has no BullMQ; each app binds them to its queue and connection), and where a failure is
 * reported.
 */
export interface AnnounceDeps {
  sql: Sql;
  /** `enqueueWebhookDeliveries` on the webhooks queue. */
  enqueueWebhookDeliveries: (deliveries: DeliveryRef[]) => Promise<void>;
  /** `publishUserEvents` on QUEUE_PREFIX. */
  publishUserEvents: (events: LiveEvent[]) => Promise<void>;
  /** `usersListening` on QUEUE_PREFIX: with no stream open, moved messages cost no read. */
  usersListening: () => Promise<Set<string>>;
  incidents: Pick<BurstLog, 'report'>;
}

/** Without moved messages nothing is read: no Postgres, no listeners asked. */
export type KnownEventsDeps = Pick<AnnounceDeps, 'enqueueWebhookDeliveries' | 'publishUserEvents' | 'incidents'>;
/** Webhook deliveries alone (a device's health, re-sent received SMS) need no live events. */
export type DeliveriesDeps = Pick<AnnounceDeps, 'enqueueWebhookDeliveries' | 'incidents'>;

/**
 * The one after-commit step of every transition, wherever it runs (the API, the dispatcher, the
 * CLI): enqueues the webhook deliveries the commit wrote and publishes the users' live events of
 * what it moved. Call it only once the transaction committed (a rolled-back one announces
 * nothing). Both are best effort and go out together (a stalled Redis costs one command timeout,
 * not two): a failure is only reported, as the delivery rows are the outbox the dispatcher's sweep
 * enqueues, and a client re-reads what it shows when its stream (re)opens.
 */
export function announceTransitions(deps: AnnounceDeps, done: Transitions): Promise<void>;
export function announceTransitions(deps: KnownEventsDeps, done: Omit<Transitions, 'moved'>): Promise<void>;
export function announceTransitions(deps: DeliveriesDeps, done: Pick<Transitions, 'deliveries'>): Promise<void>;
export async function announceTransitions(deps: DeliveriesDeps & Partial<AnnounceDeps>, done: Transitions): Promise<void> {
  await Promise.all([enqueue(deps, done.deliveries ?? []), publish(deps, done)]);
}

async function enqueue(deps: DeliveriesDeps, deliveries: readonly DeliveryRef[]): Promise<void> {
  if (deliveries.length === 0) return;
  try {
    await deps.enqueueWebhookDeliveries([...deliveries]);
  } catch (error) {
    deps.incidents.report('webhook enqueue failed: left to the outbox sweep', error, { count: deliveries.length });
  }
}

async function publish(deps: DeliveriesDeps & Partial<AnnounceDeps>, done: Transitions): Promise<void> {
  const moved = done.moved ?? [];
  const known = done.events ?? [];
  if (moved.length === 0 && known.length === 0) return;
  try {
    // The overloads give moved messages the reader, and any event the publisher.
    const read = moved.length === 0 ? [] : await statusEvents(deps as AnnounceDeps, moved);
    await deps.publishUserEvents!([...known, ...read]);
  } catch (error) {
    deps.incidents.report('publishing live events failed', error, { count: moved.length + known.length });
  }
}

/** The moved messages' events, read only for the users with a stream open (one read for all of them). */
async function statusEvents(deps: AnnounceDeps, ids: readonly string[]): Promise<LiveEvent[]> {
  const listening = await deps.usersListening();
  if (listening.size === 0) return [];
  const changes = await loadStatusEvents(deps.sql, ids, listening);
  return changes.map(({ userId, data }) => ({ userId, event: { type: 'message.status', data } }));
}
