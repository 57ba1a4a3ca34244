/**
 * The one "fit, then spill" routine of the device limits (pacing and carrier budgets, docs/devices.md):
 * a limited device is handed what fits it now; a round-robin message it cannot take goes to the
 * other devices of its pool that still have room, limited ones first while they have any, then the
 * unlimited ones sharing the rest evenly; what no device can take, and a named device's excess,
 * waits until the soonest of its devices frees room. Never fails a message.
 */
export interface Placement {
  id: string;
  deviceId: string;
  /** The SIM smsgw picked (a device with per-SIM budgets). */
  simNumber?: number;
}

export interface Fitted {
  kept: Placement[];
  left: string[];
  /** When `left` is not empty: ms until the device has room again. */
  retryInMs: number;
}

/** A device limit, as the routine applies it. */
export interface DeviceLimit {
  limits(deviceId: string): boolean;
  /** Hands a limited device what fits it now, in order, taking their room. */
  fit(deviceId: string, ids: string[]): Fitted;
  /** The messages a limited device could not keep after all give back what they held there. */
  onLeft?(deviceId: string, ids: string[]): void;
  /** The spilled messages a target refuses for another limit (they go on), their room given back. */
  refuse?(deviceId: string, kept: Placement[]): Set<string>;
}

export interface SpillInput {
  /** What was proposed, in order. */
  assignments: Placement[];
  /** The messages that may go to another device (round-robin), by id: their pool. */
  movable: Map<string, string>;
  /** Each pool's devices that may take messages now, in round-robin order. */
  pools: Map<string, string[]>;
}

export interface SpillResult {
  assignments: Placement[];
  /** Messages no device may take now, with ms until they may be tried again. */
  waiting: Map<string, number>;
}

// A message that waits for a device's limit is tried again no sooner than this.
export const MIN_WAIT_MS = 1000;

export function fitAndSpill(limit: DeviceLimit, input: SpillInput): SpillResult {
  const result: SpillResult = { assignments: [], waiting: new Map() };
  const byDevice = new Map<string, string[]>();
  for (const a of input.assignments) {
    if (!limit.limits(a.deviceId)) result.assignments.push(a);
    else byDevice.set(a.deviceId, [...(byDevice.get(a.deviceId) ?? []), a.id]);
  }
  const full = new Map<string, number>(); // device -> ms until room frees
  const leftByPool = new Map<string, string[]>();
  for (const [deviceId, ids] of byDevice) {
    const { kept, left, retryInMs } = limit.fit(deviceId, ids);
    result.assignments.push(...kept);
    if (left.length === 0) continue;
    full.set(deviceId, retryInMs);
    for (const id of left) {
      const pool = input.movable.get(id);
      if (pool === undefined) result.waiting.set(id, Math.max(MIN_WAIT_MS, retryInMs));
      else leftByPool.set(pool, [...(leftByPool.get(pool) ?? []), id]);
    }
    limit.onLeft?.(deviceId, left);
  }

  for (const [pool, spilled] of leftByPool) {
    const candidates = (input.pools.get(pool) ?? []).filter((d) => !full.has(d));
    const open = candidates.filter((d) => !limit.limits(d));
    let left = spilled;
    for (const target of [...candidates.filter((d) => limit.limits(d)), ...open]) {
      if (left.length === 0) break;
      // Unlimited devices share the rest evenly (what one refuses goes on to the next).
      const fitted = limit.limits(target)
        ? limit.fit(target, left)
        : {
            kept: left.slice(0, Math.ceil(left.length / (open.length - open.indexOf(target)))).map((id) => ({ id, deviceId: target })),
            left: [],
            retryInMs: 0,
          };
      const refused = limit.refuse?.(target, fitted.kept) ?? new Set<string>();
      const placed = fitted.kept.filter((p) => !refused.has(p.id));
      result.assignments.push(...placed);
      const placedIds = new Set(placed.map((p) => p.id));
      left = left.filter((id) => !placedIds.has(id));
      if (fitted.left.length > 0) full.set(target, fitted.retryInMs);
    }
    const soonest = Math.min(...(input.pools.get(pool) ?? []).map((d) => full.get(d) ?? Infinity));
    for (const id of left) result.waiting.set(id, Math.max(MIN_WAIT_MS, Number.isFinite(soonest) ? soonest : MIN_WAIT_MS));
  }
  return result;
}
