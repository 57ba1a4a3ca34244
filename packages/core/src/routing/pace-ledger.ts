import type { RoutingSnapshot } from './snapshot.ts';

/**
 * The devices' pacing windows as the plan fills them (docs/devices.md, "Pacing"): each paced device
 * has the room its windows had when the counters were read; a device is handed at most that, and
 * once it is full its next place frees `retryInMs` later. The places the plan keeps are reserved
 * afterwards by packages/queue's `DevicePacing.take`, which checks them again atomically.
 */
export class PaceLedger {
  private readonly room: Map<string, number>;
  private readonly held = new Map<string, Set<string>>();

  constructor(private readonly snapshot: Pick<RoutingSnapshot, 'rateLimits' | 'counters'>) {
    this.room = new Map([...snapshot.counters.pacing].map(([deviceId, pace]) => [deviceId, pace.room]));
  }

  limits(deviceId: string): boolean {
    return this.snapshot.rateLimits.has(deviceId);
  }

  /** Hands the device as many of `ids` (the first ones) as it has room for; the rest wait `retryInMs` or go on. */
  take(deviceId: string, ids: string[]): { taken: string[]; left: string[]; retryInMs: number } {
    if (!this.limits(deviceId)) return { taken: ids, left: [], retryInMs: 0 };
    const room = this.room.get(deviceId) ?? 0;
    const taken = ids.slice(0, room);
    this.room.set(deviceId, room - taken.length);
    const held = this.held.get(deviceId) ?? new Set<string>();
    for (const id of taken) held.add(id);
    this.held.set(deviceId, held);
    const left = ids.slice(taken.length);
    return { taken, left, retryInMs: left.length > 0 ? (this.snapshot.counters.pacing.get(deviceId)?.retryInMs ?? 0) : 0 };
  }

  /** Gives back the places of `ids` on the device (a budget refused them there). */
  release(deviceId: string, ids: Iterable<string>): void {
    const held = this.held.get(deviceId);
    if (!held) return;
    let freed = 0;
    for (const id of ids) if (held.delete(id)) freed++;
    this.room.set(deviceId, (this.room.get(deviceId) ?? 0) + freed);
  }

  /** Whether the message holds a place on the device. */
  holds(deviceId: string, id: string): boolean {
    return this.held.get(deviceId)?.has(id) ?? false;
  }
}
