import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createSubscriberConnection, parseUserEventBatch, userEventsChannel, type UserEvent, onRedisError } from '@smsgw/queue';

/** Subscribes this process to a user's channel, or leaves it (the first and last stream of the user here). */
export interface UserChannels {
  subscribe(userId: string): Promise<void>;
  unsubscribe(userId: string): Promise<void>;
}

/**
 * The users' live events on this API process (`GET /api/v1/events`). The process subscribes to a
 * user's Redis channel while it holds one of the user's streams (`@smsgw/queue` user-events), and
 * hands the batches published there (by the dispatchers and the API processes) to those streams.
 */
export class UserEventHub {
  private readonly listeners = new Map<string, Set<(events: UserEvent[]) => void>>();
  private readonly closers = new Set<() => void>();
  private isClosed = false;

  constructor(private readonly channels: UserChannels) {}

  /**
   * Calls `listener` with each batch of the user's events until `stop` is called; `subscribed`
   * settles once this process hears the user's channel (events published before may be missed).
   */
  listen(userId: string, listener: (events: UserEvent[]) => void): { subscribed: Promise<void>; stop: () => void } {
    let set = this.listeners.get(userId);
    // Redis applies a connection's SUBSCRIBE and UNSUBSCRIBE in the order they were sent, so a
    // stream opening while the last one's unsubscribe is on its way ends subscribed.
    const subscribed = set ? Promise.resolve() : this.channels.subscribe(userId);
    if (!set) this.listeners.set(userId, (set = new Set()));
    set.add(listener);
    const stop = () => {
      if (!set.delete(listener)) return;
      if (set.size === 0 && this.listeners.get(userId) === set) {
        this.listeners.delete(userId);
        void this.channels.unsubscribe(userId).catch(() => undefined);
      }
    };
    return { subscribed, stop };
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
    // A subscribed connection can do nothing else, so it is a connection of its own; ioredis
    // subscribes again to every channel it held when it reconnects.
    const subscriber = createSubscriberConnection(app.redis);
    const prefix = app.config.QUEUE_PREFIX;
    const hub = new UserEventHub({
      subscribe: async (userId) => void (await subscriber.subscribe(userEventsChannel(prefix, userId))),
      unsubscribe: async (userId) => void (await subscriber.unsubscribe(userEventsChannel(prefix, userId))),
    });
    subscriber.on('message', (from: string, text: string) => {
      const batch = parseUserEventBatch(text);
      if (batch && from === userEventsChannel(prefix, batch.user_id)) hub.emit(batch.user_id, batch.events);
    });
    onRedisError(subscriber, 'user event subscription failed', (what, error) => app.incidents.report(what, error));
    app.decorate('userEvents', hub);
    app.addHook('preClose', async () => hub.close());
    app.addHook('onClose', async () => {
      subscriber.disconnect();
    });
  },
  { name: 'user-events', dependencies: ['resources'] },
);
