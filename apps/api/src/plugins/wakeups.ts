import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { wakeupChannel } from '@smsgw/queue';

/**
 * Wake-ups for the devices connected to this API process. One Redis subscription per process
 * receives every device's wake-ups (published by any dispatcher) and hands them to the device's
 * open event streams and long polls.
 */
export class WakeupHub {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Calls `listener` on each wake-up of the device until the returned function is called. */
  listen(deviceId: string, listener: () => void): () => void {
    let set = this.listeners.get(deviceId);
    if (!set) this.listeners.set(deviceId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(deviceId) === set) this.listeners.delete(deviceId);
    };
  }

  /**
   * Starts listening now and resolves at the first wake-up after this call, at `timeoutMs`, or on
   * abort. Registering before looking for work means a wake-up in between is never missed.
   */
  waiter(deviceId: string): { wait: (timeoutMs: number, signal?: AbortSignal) => Promise<boolean>; cancel: () => void } {
    let woken = false;
    let notify: (() => void) | undefined;
    const stop = this.listen(deviceId, () => {
      woken = true;
      notify?.();
    });
    return {
      cancel: stop,
      wait: (timeoutMs, signal) =>
        new Promise<boolean>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            notify = undefined;
            const result = woken;
            woken = false;
            resolve(result);
          };
          if (woken || signal?.aborted) return done();
          const timer = setTimeout(done, timeoutMs);
          notify = done;
          signal?.addEventListener('abort', done, { once: true });
        }),
    };
  }

  wake(deviceId: string): void {
    for (const listener of this.listeners.get(deviceId) ?? []) listener();
  }

  get connectedDevices(): number {
    return this.listeners.size;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    wakeups: WakeupHub;
  }
}

export const wakeups = fp(
  async (app: FastifyInstance) => {
    const hub = new WakeupHub();
    // A subscribed connection can do nothing else, so it is a connection of its own.
    const subscriber = app.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    const channel = wakeupChannel(app.config.QUEUE_PREFIX);
    subscriber.on('message', (from: string, deviceId: string) => {
      if (from === channel) hub.wake(deviceId);
    });
    subscriber.on('error', (error: Error) => app.log.warn({ err: error }, 'wake-up subscription error'));
    await subscriber.subscribe(channel);
    app.decorate('wakeups', hub);
    app.addHook('onClose', async () => {
      subscriber.disconnect();
    });
  },
  { name: 'wakeups', dependencies: ['resources'] },
);
