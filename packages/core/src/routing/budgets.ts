import type { SimBudgets } from '../carrier-budgets.ts';
import type { BudgetLedger, BudgetItem } from './budget-ledger.ts';
import type { BudgetScope } from './decisions.ts';
import { fitAndSpill, type Fitted, type Placement, type SpillInput, type SpillResult } from './fit-and-spill.ts';
import type { PaceLedger } from './pace-ledger.ts';
import type { DeviceBudgetLimits, RoutingMessage } from './snapshot.ts';

/** Room a placement took in the budget counters. */
export interface BudgetRoom {
  id: string;
  deviceId: string;
  scopes: BudgetScope[];
}

/**
 * The SIMs to try, in order, for a message that names none on a device with per-SIM budgets: the
 * SIMs with a budget while they have room, lowest number first, then those without one (which
 * always have room). smsgw then names the SIM, so that the phone does not pick a full one itself.
 */
export function simChoiceOrder(simNumbers: number[], budgeted: SimBudgets[]): number[] {
  const withBudget = budgeted.map((s) => s.simNumber).filter((n) => simNumbers.includes(n));
  return [...withBudget, ...simNumbers.filter((n) => !withBudget.includes(n))];
}

/**
 * Carrier budgets (docs/devices.md, "Carrier budgets"), after pacing: every device and SIM stays
 * within its budgets; a device with budgets is handed what fits them (picking a SIM with room when
 * it has per-SIM budgets), the rest spills (each target within its pacing too) or waits.
 */
export function applyBudgets(
  ledgers: { budgets: BudgetLedger; pacing: PaceLedger },
  limits: Map<string, DeviceBudgetLimits>,
  messages: Map<string, RoutingMessage>,
  input: SpillInput,
): SpillResult & { rooms: BudgetRoom[] } {
  const fitter = new SimFitter(ledgers.budgets, limits, messages);
  const { pacing } = ledgers;
  const result = fitAndSpill(
    {
      limits: (deviceId) => limits.has(deviceId),
      fit: (deviceId, ids) => fitter.fit(deviceId, ids),
      // The pacing places a device took for what it cannot have after all.
      onLeft: (deviceId, ids) => pacing.release(deviceId, ids),
      refuse: (deviceId, kept) => {
        const { left } = pacing.take(
          deviceId,
          kept.map((p) => p.id),
        );
        fitter.giveBack(deviceId, left);
        return new Set(left);
      },
    },
    input,
  );
  return { ...result, rooms: fitter.rooms };
}

/** Fits messages on one device at a time, on the SIM they name or on one with room. */
class SimFitter {
  rooms: BudgetRoom[] = [];

  constructor(
    private readonly ledger: BudgetLedger,
    private readonly limits: Map<string, DeviceBudgetLimits>,
    private readonly messages: Map<string, RoutingMessage>,
  ) {}

  fit(deviceId: string, ids: string[]): Fitted {
    const device = this.limits.get(deviceId)!;
    const kept: Placement[] = [];
    let retryInMs = Infinity;
    const tryOn = (sim: number | null, candidates: string[]): string[] => {
      const scopes = this.ledger.scopes(deviceId, device, sim);
      const { taken, retryInMs: retry } =
        scopes.length === 0
          ? { taken: candidates.map(() => true), retryInMs: 0 }
          : this.ledger.take(
              scopes,
              candidates.map((id) => this.item(id)),
            );
      candidates.forEach((id, i) => {
        if (!taken[i]) return;
        kept.push(sim === null || !this.picksSim(device, id) ? { id, deviceId } : { id, deviceId, simNumber: sim });
        if (scopes.length > 0) this.rooms.push({ id, deviceId, scopes });
      });
      const left = candidates.filter((_, i) => !taken[i]);
      if (left.length > 0) retryInMs = Math.min(retryInMs, retry);
      return left;
    };
    const left: string[] = [];
    const named = new Map<number | null, string[]>();
    for (const id of ids) {
      const sim = device.sims.length === 0 ? null : this.requestedSim(id);
      named.set(sim, [...(named.get(sim) ?? []), id]);
    }
    for (const [sim, group] of named) {
      if (sim !== null || device.sims.length === 0) {
        left.push(...tryOn(sim, group));
        continue;
      }
      let rest = group;
      for (const choice of simChoiceOrder(device.simNumbers, device.sims)) if (rest.length > 0) rest = tryOn(choice, rest);
      left.push(...rest);
    }
    return { kept, left, retryInMs: Number.isFinite(retryInMs) ? retryInMs : 0 };
  }

  /** Gives back the room of `ids` on the device (its pacing refused them). */
  giveBack(deviceId: string, ids: string[]): void {
    const back = new Set(ids);
    for (const room of this.rooms.filter((r) => r.deviceId === deviceId && back.has(r.id))) this.ledger.release(room.scopes, [this.item(room.id)]);
    this.rooms = this.rooms.filter((r) => !(r.deviceId === deviceId && back.has(r.id)));
  }

  private requestedSim(id: string): number | null {
    return this.messages.get(id)?.requestedSim ?? null;
  }

  private picksSim(device: DeviceBudgetLimits, id: string): boolean {
    return device.sims.length > 0 && this.requestedSim(id) === null;
  }

  private item(id: string): BudgetItem {
    const m = this.messages.get(id);
    return { segments: m?.segments ?? 1, to: m?.to ?? id };
  }
}
