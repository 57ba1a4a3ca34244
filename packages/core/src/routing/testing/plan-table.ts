import { expect, it } from 'vitest';
import { NO_BUDGETS, type Budgets } from '../../carrier-budgets.ts';
import type { RateLimits } from '../../pacing.ts';
import type { Decision } from '../decisions.ts';
import { planRouting } from '../plan.ts';
import type { DeviceBudgetLimits, RoutingMessage, RoutingSnapshot, ScopeCounts } from '../snapshot.ts';
import { NOW } from './routing-message.ts';

export { message, NOW } from './routing-message.ts';

/** For the planner's table tests: snapshots built from overrides, and the plan in words. */
export function perHour(limit: number): RateLimits {
  return { perMinute: null, perHour: limit, perDay: null };
}

export function budgets(device: Partial<Budgets>, sims: (Partial<Budgets> & { simNumber: number })[] = [], simNumbers = [1]): DeviceBudgetLimits {
  return { device: { ...NO_BUDGETS, ...device }, sims: sims.map((s) => ({ ...NO_BUDGETS, ...s })), simNumbers, generation: '1' };
}

/** Counts of a scope that handed `parts` parts in the minute `minutesAgo` minutes before NOW. */
export function used(parts: number, options: { minutesAgo?: number; recipients?: string[] } = {}): ScopeCounts {
  const minute = Math.floor(NOW.getTime() / 60_000) - (options.minutesAgo ?? 0);
  const known = options.recipients ?? [];
  return { minutes: parts > 0 ? [[minute, parts]] : [], day: parts, month: parts, recipients: known.length, known: new Set(known) };
}

export interface SnapshotSketch {
  messages: RoutingMessage[];
  /** By pool key: `u1`, or `u1:sms_gate` for the SMS Gate phones. */
  pools?: Record<string, string[]>;
  paused?: string[];
  sticky?: Record<string, { deviceId: string; simNumber: number | null }>;
  rateLimits?: Record<string, RateLimits>;
  /** Room left in each paced device's windows, and ms until a place frees once it is full. */
  room?: Record<string, { room: number; retryInMs: number }>;
  budgets?: Record<string, DeviceBudgetLimits>;
  /** By scope key (`device:sim`, 0 for the device as a whole). */
  counts?: Record<string, ScopeCounts>;
  cursors?: Record<string, number>;
}

export function snapshot(s: SnapshotSketch): RoutingSnapshot {
  const map = <T>(record: Record<string, T> | undefined) => new Map(Object.entries(record ?? {}));
  return {
    now: NOW,
    maxQueueSeconds: 3600,
    messages: s.messages,
    pools: map(s.pools ?? { u1: ['d1', 'd2'] }),
    paused: new Set(s.paused ?? []),
    sticky: map(s.sticky),
    rateLimits: map(s.rateLimits),
    budgets: map(s.budgets),
    counters: {
      clock: NOW.getTime(),
      cursors: map(s.cursors),
      slots: new Map(),
      pacing: new Map(Object.keys(s.rateLimits ?? {}).map((d) => [d, s.room?.[d] ?? { room: 1000, retryInMs: 0 }])),
      budgets: map(s.counts),
    },
  };
}

/** The plan in words, by message: `d1`, `d1 sim 2`, `wait 40s (budget)`, `wait (no_device)`, `fail (expired)`. */
export function described(plan: { decisions: Map<string, Decision> }): Record<string, string> {
  return Object.fromEntries(
    [...plan.decisions].map(([id, d]) => {
      if (d.action === 'assign') return [id, d.simNumber === null ? d.deviceId : `${d.deviceId} sim ${d.simNumber}`];
      if (d.action === 'fail') return [id, `fail (${d.reason})`];
      if (d.reason === 'no_device') return [id, 'wait (no_device)'];
      return [id, `wait ${(d.until.getTime() - NOW.getTime()) / 1000}s (${d.reason})`];
    }),
  );
}

export const at = (ms: number) => new Date(NOW.getTime() + ms);

export interface PlanRow {
  name: string;
  sketch: SnapshotSketch;
  plan: Record<string, string>;
}

/** One test per row: the snapshot sketched gives the plan stated. */
export function planTable(rows: PlanRow[]): void {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_, row) => {
    expect(described(planRouting(snapshot(row.sketch)))).toEqual(row.plan);
  });
}
