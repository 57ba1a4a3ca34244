import { hasBudget, paceWindows, simChoiceOrder } from '@smsgw/core';
import { budgetMessages, budgetSeed, deviceBudgetLimits, deviceRateLimits, type BudgetMessage, type DeviceBudgetLimits, type Sql } from '@smsgw/db/sql';
import type { BudgetItem, BudgetScope, DeviceBudgets, DevicePacing } from '@smsgw/queue';
import type { Assignment, PacingInput } from './pace-assignments.ts';

/** An assignment after budgets: `simNumber` when smsgw picked the SIM (the device has per-SIM budgets). */
export interface BudgetedAssignment extends Assignment {
  simNumber?: number;
}

/** Room taken in the shared counters, to give back if the assignment loses its compare-and-set. */
export interface TakenRoom {
  id: string;
  deviceId: string;
  scopes: { deviceId: string; sim: number }[];
  at: number;
  item: BudgetItem;
}

export interface BudgetedAssignments {
  assignments: BudgetedAssignment[];
  /** Messages no device has room for now, with when to try again (ms). */
  waiting: Map<string, number>;
  taken: TakenRoom[];
}

export interface BudgetDeps {
  sql: Sql;
  budgets: DeviceBudgets;
  pacing: DevicePacing;
}

// A message that waits for a budget is tried again no sooner than this.
const MIN_WAIT_MS = 1000;

/**
 * Keeps every device and SIM within its carrier budgets (docs/devices.md, "Carrier budgets"), after
 * pacing: a device with budgets is handed what fits them (picking a SIM with room when it has
 * per-SIM budgets); round-robin gives the rest to the user's other devices with room (budgeted ones
 * first, then the others, each within its pacing); a named device's excess, and what no device
 * can take, waits until room frees. Never fails a message.
 */
export async function budgetAssignments(deps: BudgetDeps, input: PacingInput): Promise<BudgetedAssignments> {
  const devices = new Set([...input.assignments.map((a) => a.deviceId), ...[...input.pools.values()].flat()]);
  const limits = await deviceBudgetLimits(deps.sql, [...devices]);
  const result: BudgetedAssignments = { assignments: [], waiting: new Map(), taken: [] };
  const byDevice = new Map<string, string[]>();
  for (const a of input.assignments) {
    if (!limits.has(a.deviceId)) result.assignments.push(a);
    else byDevice.set(a.deviceId, [...(byDevice.get(a.deviceId) ?? []), a.id]);
  }
  if (byDevice.size === 0) return result;

  const messages = await budgetMessages(deps.sql, [...byDevice.values()].flat());
  const fitter = new Fitter(deps, limits, messages, result);
  const full = new Map<string, number>(); // device -> ms until room frees
  const leftByUser = new Map<string, { id: string; from: string }[]>();
  for (const [deviceId, ids] of byDevice) {
    const { left, retryInMs } = await fitter.fit(deviceId, ids);
    if (left.length === 0) continue;
    full.set(deviceId, retryInMs);
    for (const id of left) {
      const userId = input.movable.get(id);
      if (userId === undefined) result.waiting.set(id, Math.max(MIN_WAIT_MS, retryInMs));
      else leftByUser.set(userId, [...(leftByUser.get(userId) ?? []), { id, from: deviceId }]);
    }
    // The pacing places the device took for what it cannot have after all.
    await deps.pacing.release(deviceId, left);
  }

  for (const [userId, spilled] of leftByUser) {
    const pool = (input.pools.get(userId) ?? []).filter((d) => !full.has(d));
    const open = pool.filter((d) => !limits.has(d));
    const targets = [...pool.filter((d) => limits.has(d)), ...open];
    const rates = await deviceRateLimits(deps.sql, targets);
    let left = spilled.map((s) => s.id);
    for (const target of targets) {
      if (left.length === 0) break;
      // Devices without budgets share the rest evenly (what one's pacing refuses goes on to the next).
      const share = () => left.slice(0, Math.ceil(left.length / (open.length - open.indexOf(target))));
      const fitted = limits.has(target) ? await fitter.fit(target, left) : { left: [], retryInMs: 0, kept: share().map((id) => ({ id, deviceId: target })) };
      if (!limits.has(target)) result.assignments.push(...fitted.kept);
      const fittedIds = new Set(fitted.kept.map((a) => a.id));
      const rate = rates.get(target);
      if (rate && fittedIds.size > 0) {
        const ids = [...fittedIds];
        const { taken } = await deps.pacing.take(target, paceWindows(rate), ids);
        await fitter.giveBack(target, new Set(ids.slice(taken)));
        for (const id of ids.slice(taken)) fittedIds.delete(id);
      }
      left = left.filter((id) => !fittedIds.has(id));
      if (fitted.left.length > 0) full.set(target, fitted.retryInMs);
    }
    const soonest = Math.min(...(input.pools.get(userId) ?? []).map((d) => full.get(d) ?? Infinity));
    for (const id of left) result.waiting.set(id, Math.max(MIN_WAIT_MS, Number.isFinite(soonest) ? soonest : MIN_WAIT_MS));
  }
  return result;
}

/** Fits messages on one device at a time, recording the room it takes and the assignments it makes. */
class Fitter {
  constructor(
    private readonly deps: BudgetDeps,
    private readonly limits: Map<string, DeviceBudgetLimits>,
    private readonly messages: Map<string, BudgetMessage>,
    private readonly result: BudgetedAssignments,
  ) {}

  /** Hands the device what fits its budgets (a SIM with room for those naming none); returns the rest. */
  async fit(deviceId: string, ids: string[]): Promise<{ kept: BudgetedAssignment[]; left: string[]; retryInMs: number }> {
    const device = this.limits.get(deviceId)!;
    const kept: BudgetedAssignment[] = [];
    let retryInMs = Infinity;
    const tryOn = async (sim: number | null, candidates: string[]): Promise<string[]> => {
      const scopes = this.scopes(deviceId, device, sim);
      const { taken, retry, at } = await this.take(scopes, candidates.map((id) => this.item(id)));
      candidates.forEach((id, i) => {
        if (!taken[i]) return;
        kept.push(sim === null || !this.picksSim(device, id) ? { id, deviceId } : { id, deviceId, simNumber: sim });
        if (scopes.length > 0) this.result.taken.push({ id, deviceId, scopes: scopes.map((s) => ({ deviceId: s.deviceId, sim: s.sim })), at, item: this.item(id) });
      });
      const left = candidates.filter((_, i) => !taken[i]);
      if (left.length > 0) retryInMs = Math.min(retryInMs, retry);
      return left;
    };
    const left: string[] = [];
    const named = new Map<number | null, string[]>();
    for (const id of ids) {
      const sim = device.sims.length === 0 ? null : this.messages.get(id)?.requestedSim ?? null;
      named.set(sim, [...(named.get(sim) ?? []), id]);
    }
    for (const [sim, group] of named) {
      if (sim !== null || device.sims.length === 0) {
        left.push(...(await tryOn(sim, group)));
        continue;
      }
      let rest = group;
      for (const choice of simChoiceOrder(device.simNumbers, device.sims)) if (rest.length > 0) rest = await tryOn(choice, rest);
      left.push(...rest);
    }
    this.result.assignments.push(...kept);
    return { kept, left, retryInMs: Number.isFinite(retryInMs) ? retryInMs : 0 };
  }

  /** Takes back assignments made on `deviceId` for `ids` (its pacing refused them), with their room. */
  async giveBack(deviceId: string, ids: Set<string>): Promise<void> {
    if (ids.size === 0) return;
    this.result.assignments = this.result.assignments.filter((a) => !(a.deviceId === deviceId && ids.has(a.id)));
    const back = this.result.taken.filter((t) => t.deviceId === deviceId && ids.has(t.id));
    this.result.taken = this.result.taken.filter((t) => !back.includes(t));
    await releaseRoom(this.deps.budgets, back);
  }

  private picksSim(device: DeviceBudgetLimits, id: string): boolean {
    return device.sims.length > 0 && (this.messages.get(id)?.requestedSim ?? null) === null;
  }

  private item(id: string): BudgetItem {
    const m = this.messages.get(id);
    return { segments: m?.segments ?? 1, to: m?.to ?? id };
  }

  private scopes(deviceId: string, device: DeviceBudgetLimits, sim: number | null): BudgetScope[] {
    const scopes: BudgetScope[] = [];
    if (hasBudget(device.device)) scopes.push({ deviceId, sim: 0, generation: device.generation, limits: device.device });
    const simBudget = sim === null ? undefined : device.sims.find((s) => s.simNumber === sim);
    if (simBudget) scopes.push({ deviceId, sim: simBudget.simNumber, generation: device.generation, limits: simBudget });
    return scopes;
  }

  /** One script per try; a scope Redis has not counted (wiped, new limits) is seeded from Postgres first. */
  private async take(scopes: BudgetScope[], items: BudgetItem[]): Promise<{ taken: boolean[]; retry: number; at: number }> {
    if (scopes.length === 0) return { taken: items.map(() => true), retry: 0, at: Date.now() };
    for (let attempt = 0; attempt <= scopes.length; attempt++) {
      const take = await this.deps.budgets.take(scopes, items);
      if (!('seed' in take)) return { taken: take.taken, retry: take.retryInMs, at: take.at };
      const { deviceId, sim } = take.seed;
      await this.deps.budgets.seed(take.seed, take.at, await budgetSeed(this.deps.sql, { deviceId, sim, at: take.at }));
    }
    throw new Error('carrier budget counters could not be seeded');
  }
}

/** Gives back the room of assignments that another dispatcher made first (or that left pending). */
export async function releaseBudgets(budgets: DeviceBudgets, taken: TakenRoom[], assigned: Assignment[]): Promise<void> {
  const done = new Set(assigned.map((a) => `${a.id}:${a.deviceId}`));
  await releaseRoom(budgets, taken.filter((t) => !done.has(`${t.id}:${t.deviceId}`)));
}

async function releaseRoom(budgets: DeviceBudgets, rooms: TakenRoom[]): Promise<void> {
  const groups = new Map<string, TakenRoom[]>();
  for (const room of rooms) {
    const key = `${room.at}:${room.scopes.map((s) => `${s.deviceId}/${s.sim}`).join(',')}`;
    groups.set(key, [...(groups.get(key) ?? []), room]);
  }
  for (const group of groups.values()) await budgets.release(group[0]!.scopes, group[0]!.at, group.map((r) => r.item));
}
