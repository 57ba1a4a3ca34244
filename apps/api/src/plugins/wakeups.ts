import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { cancelChannel, createSubscriberConnection, settingsChannel, wakeupChannel, onRedisError } from '@smsgw/queue';

/**
 * Wake-ups for the devices connected to this API process. One Redis subscription per process
 * receives every device's wake-ups (published by any dispatcher), cancels and settings changes
 * (published by any API process) and hands them to the device's open event streams and long polls.
 */
/** What a device is told: a wake-up, a cancel of one message, or that its settings changed. */
export type DeviceNotice = { type: 'wakeup' } | { type: 'cancel'; messageId: string } | { type: 'settings' };
export type DeviceListener = (notice: DeviceNotice) => void;

export class WakeupHub {
  private readonly listeners = new Map<string, Set<DeviceListener>>();
  // The waits in progress, ended at once when the API shuts down.
  private readonly waiting = new Set<() => void>();
  private isClosed = false;

  /** Calls `listener` on each wake-up and cancel of the device until the returned function is called. */
  listen(deviceId: string, listener: DeviceListener): () => void {
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
    const stop = this.listen(deviceId, (notice) => {
      if (notice.type !== 'wakeup') return;
      woken = true;
      notify?.();
    });
    return {
      cancel: stop,
      wait: (timeoutMs, signal) =>
        new Promise<boolean>((resolve) => {
          let timer: NodeJS.Timeout | undefined;
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            this.waiting.delete(done);
            notify = undefined;
            const result = woken;
            woken = false;
            resolve(result);
          };
          if (woken || signal?.aborted || this.isClosed) return done();
          timer = setTimeout(done, timeoutMs);
          notify = done;
          this.waiting.add(done);
          signal?.addEventListener('abort', done, { once: true });
        }),
    };
  }

  /** Ends every wait now and every later one at once (the API is shutting down: long polls answer). */
  close(): void {
    this.isClosed = true;
    for (const done of [...this.waiting]) done();
  }

  /** Whether the API is shutting down: a long poll answers what it has instead of waiting. */
  get closed(): boolean {
    return this.isClosed;
  }

  wake(deviceId: string): void {
    this.tell(deviceId, { type: 'wakeup' });
  }

  cancel(deviceId: string, messageId: string): void {
    this.tell(deviceId, { type: 'cancel', messageId });
  }

  settingsUpdated(deviceId: string): void {
    this.tell(deviceId, { type: 'settings' });
  }

  private tell(deviceId: string, notice: DeviceNotice): void {
    for (const listener of this.listeners.get(deviceId) ?? []) listener(notice);
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
    const subscriber = createSubscriberConnection(app.redis);
    const channel = wakeupChannel(app.config.QUEUE_PREFIX);
    const cancels = cancelChannel(app.config.QUEUE_PREFIX);
    const settings = settingsChannel(app.config.QUEUE_PREFIX);
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) hub.wake(message);
      if (from === settings) hub.settingsUpdated(message);
      if (from === cancels) {
        const [deviceId, messageId] = message.split(' ');
        if (deviceId && messageId) hub.cancel(deviceId, messageId);
      }
    });
    onRedisError(subscriber, 'wake-up subscription failed', (what, error) => app.incidents.report(what, error));
    await subscriber.subscribe(channel, cancels, settings);
    app.decorate('wakeups', hub);
    app.addHook('preClose', async () => hub.close());
    app.addHook('onClose', async () => {
      subscriber.disconnect();
    });
  },
  { name: 'wakeups', dependencies: ['resources'] },
);
