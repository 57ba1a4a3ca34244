import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { parseUserEventBatch, userEventsChannel, type UserEvent } from '@smsgw/queue';

/**
 * The users' live events on this API process (`GET /api/v1/events`). One Redis subscription per
 * process receives every user's batches (published by the dispatchers and the API processes) and
 * hands them to that user's open streams.
 */
export class UserEventHub {
  private readonly listeners = new Map<string, Set<(events: UserEvent[]) => void>>();
  private readonly closers = new Set<() => void>();
  private isClosed = false;

  /** Calls `listener` with each batch of the user's events until the returned function is called. */
  listen(userId: string, listener: (events: UserEvent[]) => void): () => void {
    let set = this.listeners.get(userId);
    if (!set) this.listeners.set(userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(userId) === set) this.listeners.delete(userId);
    };
  }

  /** How many listeners (open streams) the user has here. */
  count(userId: string): number {
    return this.listeners.get(userId)?.size ?? 0;
  }

  emit(userId: string, events: UserEvent[]): void {
    for (const listener of this.listeners.get(userId) ?? []) listener(events);
  }

  /** Registers what ends a stream when the API shuts down; returns the function that unregisters it. */
  onClose(close: () => void): () => void {
    if (this.isClosed) {
      close();
      return () => undefined;
    }
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  /** Ends every stream now and every later one at once (the API is shutting down). */
  close(): void {
    this.isClosed = true;
    for (const close of [...this.closers]) close();
    this.closers.clear();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    userEvents: UserEventHub;
  }
}

export const userEvents = fp(
  async (app: FastifyInstance) => {
    const hub = new UserEventHub();
    // A subscribed connection can do nothing else, so it is a connection of its own.
    const subscriber = app.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
    const channel = userEventsChannel(app.config.QUEUE_PREFIX);
    subscriber.on('message', (from: string, text: string) => {
      const batch = from === channel ? parseUserEventBatch(text) : null;
      if (batch) hub.emit(batch.user_id, batch.events);
    });
    subscriber.on('error', (error: Error) => app.incidents.report('user event subscription failed', error));
    await subscriber.subscribe(channel);
    app.decorate('userEvents', hub);
    app.addHook('preClose', async () => hub.close());
    app.addHook('onClose', async () => {
      subscriber.disconnect();
    });
  },
  { name: 'user-events', dependencies: ['resources'] },
);
