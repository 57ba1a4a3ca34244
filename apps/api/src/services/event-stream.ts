import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isStreamSilent, streamSilenceLimitMs } from '@smsgw/core';
import { markStreamClosed, markStreamsSeen, type AuthenticatedDevice } from '@smsgw/db';
import { StreamSeenBatch } from './stream-seen-batch.ts';

/**
 * A device's event stream, for both protocols: server-sent events that carry the device's
 * wake-ups, a keepalive comment in between, and the device's availability (docs/devices.md,
 * "Availability"): the stream marks the device seen when it opens and on every keepalive, and
 * closed when the device's last stream here closes. A device may hold several streams at once (the
 * SMS Gate app sometimes opens a second without closing the first); each gets every event, and
 * none is closed for another.
 *
 * A phone that leaves coverage sends no FIN: its stream is ended as dead when TCP keep-alive
 * probes go unanswered, when a keepalive is still not written out at the next one (the peer
 * stopped reading), or when the device, which reports its health, fell silent (`isStreamSilent`).
 */
export interface StreamOptions {
  /** Frames written right after the stream opens. */
  greeting: string[];
  /** The frame of one wake-up. */
  wakeup: string;
  /** The frame telling the device to cancel a message it holds; absent: the device is not told. */
  cancelled?: (messageId: string) => string;
  /** The frame telling the device its settings changed; absent: the device is not told. */
  settingsUpdated?: string;
  /** Wake-ups closer together than this are coalesced into one, sent when the interval has passed. */
  minWakeupIntervalMs: number;
  keepaliveMs: number;
  keepalive: string;
}

/** Streams one device may hold on one API process; beyond that the device is answered 429. */
export const MAX_STREAMS_PER_DEVICE = 10;

/** Idle time before TCP keep-alive probes a device's socket: well inside a keepalive interval. */
export const TCP_KEEPALIVE_IDLE_MS = 5000;

/**
 * Takes the reply over as a server-sent event stream: no caching or transforming, and no buffering by
 * a proxy (nginx honours X-Accel-Buffering), so each frame reaches the client when it is written.
 */
export function openEventStream(reply: FastifyReply): FastifyReply['raw'] {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  return reply.raw;
}

export class EventStreams {
  private readonly open = new Set<() => void>();
  private readonly perDevice = new Map<string, number>();
  private readonly keepalives: StreamSeenBatch;

  constructor(private readonly app: FastifyInstance) {
    // A refresh is late by at most a quarter of the keepalive (a second at most), well inside keepalive plus grace.
    this.keepalives = new StreamSeenBatch(app, Math.min(1000, (app.config.DEVICE_HEARTBEAT_SECONDS * 1000) / 4));
  }

  /** Whether the device holds an event stream here (its keepalives write it seen). */
  holds(deviceId: string): boolean {
    return this.perDevice.has(deviceId);
  }

  /** Whether the device may open another stream here. */
  hasRoom(deviceId: string): boolean {
    return (this.perDevice.get(deviceId) ?? 0) < MAX_STREAMS_PER_DEVICE;
  }

  serve(request: FastifyRequest, reply: FastifyReply, device: AuthenticatedDevice, options: StreamOptions): void {
    const { app } = this;
    const openedAt = new Date();
    const silenceLimitMs = streamSilenceLimitMs(app.config, options.keepaliveMs);
    const socket = request.raw.socket;
    socket.setKeepAlive(true, TCP_KEEPALIVE_IDLE_MS);
    let ended = false;
    const dead = (reason: string) => {
      if (ended) return;
      app.log.warn({ deviceId: device.id, reason }, 'device event stream dead, ending it');
      socket.destroy();
    };
    const check = (reportedAt: Date | null) => {
      if (isStreamSilent({ openedAt, reportedAt }, new Date(), silenceLimitMs)) dead('the device stopped reporting');
    };
    // At once when it opens (the device is available from then on), with the other streams' keepalives later.
    const seen = () =>
      markStreamsSeen(app.sql, [device.id], new Date()).then(
        (reported) => check(reported.get(device.id) ?? null),
        (error: unknown) => app.incidents.report('marking a device stream seen failed', error),
      );
    const res = openEventStream(reply);
    void seen();
    for (const frame of options.greeting) res.write(frame);

    let lastWakeup = 0;
    let delayed: NodeJS.Timeout | undefined;
    const wakeup = () => {
      const wait = lastWakeup + options.minWakeupIntervalMs - Date.now();
      if (wait > 0) {
        delayed ??= setTimeout(() => {
          delayed = undefined;
          wakeup();
        }, wait);
        return;
      }
      lastWakeup = Date.now();
      res.write(options.wakeup);
    };
    wakeup();
    const stopListening = app.wakeups.listen(device.id, (notice) => {
      if (notice.type === 'wakeup') wakeup();
      else if (notice.type === 'cancel' && options.cancelled) res.write(options.cancelled(notice.messageId));
      else if (notice.type === 'settings' && options.settingsUpdated) res.write(options.settingsUpdated);
    });
    let drained = true;
    const keepalive = setInterval(() => {
      if (!drained) return dead('a keepalive was not written out within a keepalive interval');
      drained = false;
      res.write(options.keepalive, () => (drained = true));
      this.keepalives.mark(device.id, check);
    }, options.keepaliveMs);
    this.perDevice.set(device.id, (this.perDevice.get(device.id) ?? 0) + 1);

    const close = () => {
      if (!this.open.delete(close)) return;
      ended = true;
      const left = (this.perDevice.get(device.id) ?? 1) - 1;
      if (left > 0) this.perDevice.set(device.id, left);
      else this.perDevice.delete(device.id);
      clearInterval(keepalive);
      clearTimeout(delayed);
      stopListening();
      if (left > 0) void seen();
      else markStreamClosed(app.sql, device.id, new Date()).catch((error: unknown) => app.incidents.report('marking a device stream closed failed', error));
      res.end();
    };
    this.open.add(close);
    res.on('close', close);
  }

  /** Ends every stream (the API is shutting down). */
  closeAll(): void {
    for (const close of [...this.open]) close();
    this.keepalives.close();
  }
}
