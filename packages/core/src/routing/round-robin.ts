import type { Reservations } from './decisions.ts';
import { failoverPool, poolOf } from './pools.ts';
import type { RoutingMessage, RoutingSnapshot } from './snapshot.ts';

/**
 * The round-robin pick of slot `slot` among `pool` for one message: the slot's device, or the next
 * one when that one is the device of an expired assignment; undefined when the pool is empty.
 */
export function pickDevice(pool: readonly string[], slot: number, previous: string | null): string | undefined {
  if (pool.length === 0) return undefined;
  const device = pool[slot % pool.length]!;
  return device === previous && pool.length > 1 ? pool[(slot + 1) % pool.length] : device;
}

/**
 * Round-robin: each message whose user has a pool gets a slot of its own from the user's cursor,
 * shared by every dispatcher (one cursor per user, whichever pool), and the slot's device among
 * those it may go to: not paused, never one it failed on, not the one it just left when another is.
 */
export function roundRobin(
  messages: RoutingMessage[],
  snapshot: Pick<RoutingSnapshot, 'pools' | 'paused' | 'counters'>,
): { picks: { id: string; deviceId: string }[]; slots: Reservations['slots'] } {
  const byPool = new Map<string, RoutingMessage[]>();
  for (const m of messages) if (snapshot.pools.has(poolOf(m))) byPool.set(poolOf(m), [...(byPool.get(poolOf(m)) ?? []), m]);
  const picks: { id: string; deviceId: string }[] = [];
  const slots: Reservations['slots'] = [];
  const next = new Map(snapshot.counters.cursors);
  for (const [key, list] of byPool) {
    const userId = list[0]!.userId;
    const start = snapshot.counters.slots.get(key) ?? next.get(userId) ?? 0;
    next.set(userId, (next.get(userId) ?? 0) + list.length);
    slots.push({ pool: key, userId, start, count: list.length });
    const pool = snapshot.pools.get(key)!;
    list.forEach((message, i) => {
      const open = failoverPool(pool, { attempted: new Set(message.attemptedDeviceIds), paused: snapshot.paused });
      const device = pickDevice(open, start + i, message.previousDeviceId);
      if (device !== undefined) picks.push({ id: message.id, deviceId: device });
    });
  }
  return { picks, slots };
}
