import { AppError } from './errors.ts';

/**
 * Carrier budgets (issue 18, item 4; docs/devices.md, "Carrier budgets"): how many message parts
 * (segments) a device, or one of its SIMs, may be handed per hour, day and month, and to how many
 * different recipients per month. Windows: the hour is rolling, counted by the minute (a part counts
 * for the 60 minutes from the minute it was handed out); the day and the month are calendar ones in
 * UTC, as the monthly quota is.
 */
export interface Budgets {
  segmentsPerHour: number | null;
  segmentsPerDay: number | null;
  segmentsPerMonth: number | null;
  uniqueRecipientsPerMonth: number | null;
}

export interface SimBudgets extends Budgets {
  simNumber: number;
}

/** The most a budget may say: beyond any SIM's plan, and small enough to count exactly. */
export const MAX_BUDGET = 10_000_000;

/** The budget fields as the API, the CLI and the stored per-SIM list name them. */
export const BUDGET_FIELDS = [
  ['segments_per_hour', 'segmentsPerHour'],
  ['segments_per_day', 'segmentsPerDay'],
  ['segments_per_month', 'segmentsPerMonth'],
  ['unique_recipients_per_month', 'uniqueRecipientsPerMonth'],
] as const;
export type BudgetField = (typeof BUDGET_FIELDS)[number][0];

export const NO_BUDGETS: Budgets = { segmentsPerHour: null, segmentsPerDay: null, segmentsPerMonth: null, uniqueRecipientsPerMonth: null };

export function hasBudget(budgets: Budgets): boolean {
  return BUDGET_FIELDS.some(([, key]) => budgets[key] !== null);
}

/**
 * The SIM numbers a device has: those the SMS Gate app reported (`simCards[].simNumber`, v1.65+),
 * else SIM 1 alone (a modem, a native device, an older app).
 */
export function deviceSimNumbers(simCards: unknown): number[] {
  const numbers = Array.isArray(simCards)
    ? simCards
        .map((card) => (card && typeof card === 'object' ? (card as { simNumber?: unknown }).simNumber : undefined))
        .filter((n): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 3)
    : [];
  return numbers.length > 0 ? [...new Set(numbers)].sort((a, b) => a - b) : [1];
}

/** The stored per-SIM list (jsonb `devices.sim_budgets`), read defensively: only whole, positive entries. */
export function readSimBudgets(stored: unknown): SimBudgets[] {
  if (!Array.isArray(stored)) return [];
  return stored
    .flatMap((entry) => {
      if (!entry || typeof entry !== 'object') return [];
      const e = entry as Record<string, unknown>;
      if (!Number.isInteger(e.sim_number)) return [];
      const budgets = { ...NO_BUDGETS, simNumber: e.sim_number as number };
      for (const [field, key] of BUDGET_FIELDS) if (Number.isInteger(e[field])) budgets[key] = e[field] as number;
      return hasBudget(budgets) ? [budgets] : [];
    })
    .sort((a, b) => a.simNumber - b.simNumber);
}

/** A per-SIM change of a PATCH: a number sets a budget, null removes it, a field left out stays. */
export type SimBudgetsPatch = { sim_number: number } & Partial<Record<BudgetField, number | null>>;

/**
 * The per-SIM list after a PATCH, as stored. A SIM the device does not have is refused
 * (`invalid_request` naming it), so is the same SIM twice; a SIM left with no budget is dropped.
 */
export function mergeSimBudgets(current: SimBudgets[], patch: SimBudgetsPatch[], simNumbers: number[]): Record<string, number>[] {
  const seen = new Set<number>();
  for (const [i, change] of patch.entries()) {
    if (!simNumbers.includes(change.sim_number)) {
      throw new AppError('invalid_request', `sims[${i}].sim_number: the device has no SIM ${change.sim_number} (it has ${simNumbers.join(', ')}).`);
    }
    if (seen.has(change.sim_number)) throw new AppError('invalid_request', `sims[${i}].sim_number: SIM ${change.sim_number} is listed twice.`);
    seen.add(change.sim_number);
  }
  const bySim = new Map(current.map((s) => [s.simNumber, { ...s }]));
  for (const change of patch) {
    const next = bySim.get(change.sim_number) ?? { ...NO_BUDGETS, simNumber: change.sim_number };
    for (const [field, key] of BUDGET_FIELDS) if (change[field] !== undefined) next[key] = change[field];
    bySim.set(change.sim_number, next);
  }
  return [...bySim.values()]
    .filter(hasBudget)
    .sort((a, b) => a.simNumber - b.simNumber)
    .map(toSimBudgetsJson);
}

function toSimBudgetsJson(budgets: SimBudgets): Record<string, number> {
  const json: Record<string, number> = { sim_number: budgets.simNumber };
  for (const [field, key] of BUDGET_FIELDS) if (budgets[key] !== null) json[field] = budgets[key];
  return json;
}

/** The windows at `now`: the rolling hour's first minute, the UTC day and month, and when each ends. */
export interface BudgetWindows {
  hourStart: Date;
  dayStart: Date;
  dayEnd: Date;
  monthStart: Date;
  monthEnd: Date;
}

export const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export function budgetWindows(now: Date): BudgetWindows {
  const minute = Math.floor(now.getTime() / MINUTE_MS);
  const day = Math.floor(now.getTime() / DAY_MS);
  return {
    hourStart: new Date((minute - 59) * MINUTE_MS),
    dayStart: new Date(day * DAY_MS),
    dayEnd: new Date((day + 1) * DAY_MS),
    monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    monthEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** What a device or SIM has used in its windows (from Postgres: the messages handed to it). */
export interface BudgetCounts {
  hour: number;
  /** The first assignment still in the rolling hour (null: none). */
  hourOldest: Date | null;
  day: number;
  month: number;
  recipients: number;
}

export const NO_COUNTS: BudgetCounts = { hour: 0, hourOldest: null, day: 0, month: 0, recipients: 0 };

export interface BudgetUse {
  limit: number | null;
  used: number;
  /** When the window next frees room: the rolling hour when its oldest part leaves (null: nothing in it). */
  resets_at: string | null;
}

export type BudgetUsage = Record<BudgetField, BudgetUse>;

/** The usage the device record shows against each budget, with when each window resets. */
export function budgetUsage(budgets: Budgets, counts: BudgetCounts, now: Date): BudgetUsage {
  const w = budgetWindows(now);
  const hourResets = counts.hourOldest === null ? null : new Date((Math.floor(counts.hourOldest.getTime() / MINUTE_MS) + 60) * MINUTE_MS);
  return {
    segments_per_hour: { limit: budgets.segmentsPerHour, used: counts.hour, resets_at: hourResets?.toISOString() ?? null },
    segments_per_day: { limit: budgets.segmentsPerDay, used: counts.day, resets_at: w.dayEnd.toISOString() },
    segments_per_month: { limit: budgets.segmentsPerMonth, used: counts.month, resets_at: w.monthEnd.toISOString() },
    unique_recipients_per_month: { limit: budgets.uniqueRecipientsPerMonth, used: counts.recipients, resets_at: w.monthEnd.toISOString() },
  };
}

/** No room left for even one part to a new recipient in some window. */
export function budgetFull(usage: BudgetUsage): boolean {
  return BUDGET_FIELDS.some(([field]) => usage[field].limit !== null && usage[field].used >= usage[field].limit!);
}

/**
 * `budget_exhausted` (device health): the device as a whole is full, or every SIM it has is full
 * by its own budget (a SIM without one always has room).
 */
export function budgetExhausted(device: BudgetUsage, sims: { simNumber: number; usage: BudgetUsage }[], simNumbers: number[]): boolean {
  if (budgetFull(device)) return true;
  const full = new Set(sims.filter((s) => budgetFull(s.usage)).map((s) => s.simNumber));
  return sims.length > 0 && simNumbers.every((n) => full.has(n));
}
