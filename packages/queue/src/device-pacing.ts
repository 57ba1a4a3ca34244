import type { RedisClient } from './topology.ts';
import { luaScript } from './commands/index.ts';

/**
 * Per-device pacing (issue 16): a device is handed at most `limit` messages in any window of
 * `windowMs`, for each of its windows (a minute, an hour, a day), across every dispatcher. Redis
 * keeps, per device, a sorted set of the messages handed to it scored by when (Redis's own clock,
 * so dispatchers' clocks do not matter); taking is one script, so two dispatchers never both take
 * the last place. A sliding log: at each hand-out at most `limit` others were handed in the
 * window before it, hence in any window.
 */
export interface PaceWindow {
  windowMs: number;
  limit: number;
}

export interface PaceTake {
  /** How many of the offered messages (the first ones) the device may be handed now. */
  taken: number;
  /** When nothing more fits: milliseconds until a place frees up; 0 when there is room. */
  retryInMs: number;
}

export class DevicePacing {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(deviceId: string): string {
    return `${this.prefix}:pace:${deviceId}`;
  }

  /**
   * Hands the device as many of `messageIds` (in order) as its windows allow now, recording them;
   * the rest must wait `retryInMs` or go to another device.
   */
  async take(deviceId: string, windows: PaceWindow[], messageIds: string[]): Promise<PaceTake> {
    if (windows.length === 0) return { taken: messageIds.length, retryInMs: 0 };
    if (messageIds.length === 0) return { taken: 0, retryInMs: 0 };
    const keep = Math.max(...windows.map((w) => w.windowMs));
    const args = [keep, windows.length, ...windows.flatMap((w) => [w.windowMs, w.limit]), ...messageIds];
    const [taken, retry] = (await this.redis.eval(luaScript('pace-take'), 1, this.key(deviceId), ...args)) as [number, number];
    return { taken, retryInMs: taken === messageIds.length ? 0 : retry };
  }

  /**
   * The room each device's windows have now, and when a place frees once it is taken (read only,
   * one round trip for all): what the routing planner fills before `take` reserves it.
   */
  async peek(devices: { deviceId: string; windows: PaceWindow[] }[]): Promise<Map<string, { room: number; retryInMs: number }>> {
    const paced = devices.filter((d) => d.windows.length > 0);
    if (paced.length === 0) return new Map();
    const pipeline = this.redis.pipeline();
    for (const { deviceId, windows } of paced) {
      pipeline.eval(luaScript('pace-peek'), 1, this.key(deviceId), windows.length, ...windows.flatMap((w) => [w.windowMs, w.limit]));
    }
    const replies = (await pipeline.exec()) ?? [];
    return new Map(
      paced.map(({ deviceId }, i) => {
        const [error, reply] = replies[i] ?? [new Error('no reply'), null];
        if (error) throw error;
        const [room, retryInMs] = reply as [number, number];
        return [deviceId, { room, retryInMs }];
      }),
    );
  }

  /** Gives back the places of messages that were not handed after all (another dispatcher assigned them first). */
  async release(deviceId: string, messageIds: string[]): Promise<void> {
    if (messageIds.length > 0) await this.redis.zrem(this.key(deviceId), ...messageIds);
  }
}
