import { paceWindows, type RateLimits } from '@smsgw/core';
import { deviceRateLimits, type Sql } from '@smsgw/db/sql';
import type { DevicePacing } from '@smsgw/queue';

export interface Assignment {
  id: string;
  deviceId: string;
}

export interface PacingInput {
  /** What round-robin and the callers' named devices proposed, in order. */
  assignments: Assignment[];
  /** Messages that may go to another device (round-robin), by id: their user. */
  movable: Map<string, string>;
  /** Each user's available devices, in round-robin order. */
  pools: Map<string, string[]>;
}

export interface PacedAssignments {
  assignments: Assignment[];
  /** Messages no device may take now, with when to try again (ms). */
  waiting: Map<string, number>;
  /** The places taken in the devices' logs, to give back for messages another dispatcher assigned first. */
  limited: Set<string>;
}

// A message that waits for pacing is tried again no sooner than this.
const MIN_WAIT_MS = 1000;

/**
 * Keeps every device under its rate limits (docs/devices.md, "Pacing"): a limited device is handed
 * what fits its windows now; round-robin gives the rest to the user's other devices with room,
 * limited ones first while they have any, then those without limits in turn; what no device can
 * take, and a named device's excess, waits until a place frees up. Never fails a message.
 */
export async function paceAssignments(sql: Sql, pacing: DevicePacing, input: PacingInput): Promise<PacedAssignments> {
  const devices = new Set([...input.assignments.map((a) => a.deviceId), ...[...input.pools.values()].flat()]);
  const limits = await deviceRateLimits(sql, [...devices]);
  if (limits.size === 0) return { assignments: input.assignments, waiting: new Map(), limited: new Set() };

  const take = async (deviceId: string, ids: string[], rate: RateLimits) => pacing.take(deviceId, paceWindows(rate), ids);
  const kept: Assignment[] = [];
  const overflow = new Map<string, { ids: string[]; retryInMs: number }>(); // by device
  const byDevice = new Map<string, string[]>();
  for (const a of input.assignments) {
    if (!limits.has(a.deviceId)) kept.push(a);
    else byDevice.set(a.deviceId, [...(byDevice.get(a.deviceId) ?? []), a.id]);
  }
  const full = new Map<string, number>(); // device -> ms until a place frees
  for (const [deviceId, ids] of byDevice) {
    const { taken, retryInMs } = await take(deviceId, ids, limits.get(deviceId)!);
    kept.push(...ids.slice(0, taken).map((id) => ({ id, deviceId })));
    if (taken < ids.length) {
      overflow.set(deviceId, { ids: ids.slice(taken), retryInMs });
      full.set(deviceId, retryInMs);
    }
  }

  const waiting = new Map<string, number>();
  const leftByUser = new Map<string, string[]>();
  for (const { ids, retryInMs } of overflow.values()) {
    for (const id of ids) {
      const userId = input.movable.get(id);
      if (userId === undefined) waiting.set(id, Math.max(MIN_WAIT_MS, retryInMs));
      else leftByUser.set(userId, [...(leftByUser.get(userId) ?? []), id]);
    }
  }
  for (const [userId, ids] of leftByUser) {
    let left = ids;
    const pool = (input.pools.get(userId) ?? []).filter((d) => !full.has(d));
    for (const deviceId of pool.filter((d) => limits.has(d))) {
      if (left.length === 0) break;
      const { taken, retryInMs } = await take(deviceId, left, limits.get(deviceId)!);
      kept.push(...left.slice(0, taken).map((id) => ({ id, deviceId })));
      left = left.slice(taken);
      if (left.length > 0) full.set(deviceId, retryInMs);
    }
    const unlimited = pool.filter((d) => !limits.has(d));
    if (unlimited.length > 0) {
      kept.push(...left.map((id, i) => ({ id, deviceId: unlimited[i % unlimited.length]! })));
      continue;
    }
    const soonest = Math.min(...(input.pools.get(userId) ?? []).map((d) => full.get(d) ?? Infinity));
    for (const id of left) waiting.set(id, Math.max(MIN_WAIT_MS, Number.isFinite(soonest) ? soonest : MIN_WAIT_MS));
  }
  return { assignments: kept, waiting, limited: new Set(limits.keys()) };
}
