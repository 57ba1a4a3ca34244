import { hasBudget, MINUTE_MS } from '../carrier-budgets.ts';
import type { BudgetScope } from './decisions.ts';
import { scopeKey, type DeviceBudgetLimits, type ScopeCounts } from './snapshot.ts';

const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** What a message costs a budget. */
export interface BudgetItem {
  segments: number;
  to: string;
}

/**
 * The carrier budgets' counters as the plan fills them (docs/devices.md, "Carrier budgets"): the
 * same arithmetic as packages/queue's `take-budget.lua`, on the counts read with the snapshot, so
 * that the room the plan keeps is the room that script then takes (it checks again atomically).
 */
export class BudgetLedger {
  private readonly counts = new Map<string, ScopeCounts & { to: Map<string, number> }>();
  private readonly minute: number;
  private readonly day: number;
  private readonly monthEnd: number;

  constructor(
    private readonly clock: number,
    counts: Map<string, ScopeCounts>,
  ) {
    for (const [key, c] of counts) this.counts.set(key, { ...c, minutes: c.minutes.map(([m, v]) => [m, v]), known: new Set(c.known), to: new Map() });
    this.minute = Math.floor(clock / MINUTE_MS);
    this.day = Math.floor(clock / DAY_MS);
    const at = new Date(clock);
    this.monthEnd = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  }

  /** The scopes a message on `sim` (null: none chosen) of a device with budgets counts against. */
  scopes(deviceId: string, device: DeviceBudgetLimits, sim: number | null): BudgetScope[] {
    const scopes: BudgetScope[] = [];
    if (hasBudget(device.device)) scopes.push({ deviceId, sim: 0, generation: device.generation, limits: device.device });
    const simBudget = sim === null ? undefined : device.sims.find((s) => s.simNumber === sim);
    if (simBudget) scopes.push({ deviceId, sim: simBudget.simNumber, generation: device.generation, limits: simBudget });
    return scopes;
  }

  /** Takes room for each item (in order) that fits every scope, skipping those that do not; `retryInMs`: when the soonest skipped one fits. */
  take(scopes: BudgetScope[], items: BudgetItem[]): { taken: boolean[]; retryInMs: number } {
    let retry = Infinity;
    const taken = items.map((item) => {
      const wait = Math.max(0, ...scopes.map((s) => this.wait(s, item)));
      if (wait > 0) {
        retry = Math.min(retry, wait);
        return false;
      }
      for (const s of scopes) this.add(s, item, 1);
      return true;
    });
    return { taken, retryInMs: Number.isFinite(retry) ? retry : 0 };
  }

  /** Gives back the room of items taken on `scopes`. */
  release(scopes: BudgetScope[], items: BudgetItem[]): void {
    for (const item of items) for (const s of scopes) this.add(s, item, -1);
  }

  private scope(s: BudgetScope): ScopeCounts & { to: Map<string, number> } {
    const key = scopeKey(s);
    let c = this.counts.get(key);
    if (!c) this.counts.set(key, (c = { minutes: [], day: 0, month: 0, recipients: 0, known: new Set(), to: new Map() }));
    return c;
  }

  /** How long until the scope has room for the item; 0: it has room now. */
  private wait(s: BudgetScope, item: BudgetItem): number {
    const c = this.scope(s);
    const { segmentsPerHour: lh, segmentsPerDay: ld, segmentsPerMonth: lm, uniqueRecipientsPerMonth: lu } = s.limits;
    const hour = c.minutes.reduce((sum, [, v]) => sum + v, 0);
    let wait = 0;
    if (lh !== null && hour + item.segments > lh) {
      let freed = 0;
      let frees = HOUR_MS;
      for (const [minute, v] of c.minutes) {
        freed += v;
        if (hour - freed + item.segments <= lh) {
          frees = (minute + 60) * MINUTE_MS - this.clock;
          break;
        }
      }
      wait = Math.max(wait, frees);
    }
    if (ld !== null && c.day + item.segments > ld) wait = Math.max(wait, (this.day + 1) * DAY_MS - this.clock);
    if (lm !== null && c.month + item.segments > lm) wait = Math.max(wait, this.monthEnd - this.clock);
    if (lu !== null && !this.knows(c, item.to) && c.recipients + 1 > lu) wait = Math.max(wait, this.monthEnd - this.clock);
    return wait;
  }

  private knows(c: { known: Set<string>; to: Map<string, number> }, to: string): boolean {
    return c.known.has(to) || (c.to.get(to) ?? 0) > 0;
  }

  private add(s: BudgetScope, item: BudgetItem, sign: 1 | -1): void {
    const c = this.scope(s);
    const last = c.minutes[c.minutes.length - 1];
    if (last && last[0] === this.minute) last[1] += sign * item.segments;
    else c.minutes.push([this.minute, sign * item.segments]);
    c.day += sign * item.segments;
    c.month += sign * item.segments;
    const wasKnown = this.knows(c, item.to);
    c.to.set(item.to, (c.to.get(item.to) ?? 0) + sign);
    if (sign === 1 && !wasKnown) c.recipients++;
    if (sign === -1 && !this.knows(c, item.to)) c.recipients--;
  }
}
