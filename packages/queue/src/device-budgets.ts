import type { RedisClient } from './topology.ts';
import { luaScript } from './commands/index.ts';

/**
 * Carrier budgets' counters (issue 18, item 4; docs/devices.md, "Carrier budgets"), shared by every
 * dispatcher in Redis and taken by one script, so two dispatchers never both take the last room.
 * A scope is a device as a whole (SIM 0) or one of its SIMs. Per scope: `:h` the parts handed out
 * per minute (the rolling hour), `:m:<month>` the month's parts, each day's parts and the
 * generation of the limits counted, `:r:<month>` the month's recipients with how many messages
 * each (so a known recipient costs nothing and a release can give one back). Windows follow Redis's
 * clock; the month is the UTC calendar month. Postgres is the record: a scope whose month key is
 * missing (Redis wiped) or counted under other limits is seeded again from the messages.
 */
/** A scope's limits (packages/core's Budgets); null: none. */
export interface BudgetLimits {
  segmentsPerHour: number | null;
  segmentsPerDay: number | null;
  segmentsPerMonth: number | null;
  uniqueRecipientsPerMonth: number | null;
}

export interface BudgetScope {
  deviceId: string;
  /** 0: the device as a whole. */
  sim: number;
  /** The generation of the device's limits (devices.budgets_changed_at); another one is counted again. */
  generation: string;
  limits: BudgetLimits;
}

export interface BudgetItem {
  segments: number;
  to: string;
}

export type BudgetTake = { taken: boolean[]; retryInMs: number; at: number } | { seed: BudgetScope; at: number };

/** A scope's counts as `peek` read them (Redis's clock `at`), or the scope to seed first. */
export type BudgetPeek =
  | { at: number; minutes: [minute: number, segments: number][]; day: number; month: number; recipients: number; known: Set<string> }
  | { seed: BudgetScope; at: number };

/** What Postgres says a scope used, for a seed: per minute in the rolling hour, the day, the month and its recipients. */
export interface BudgetSeed {
  minutes: [minute: number, segments: number][];
  day: number;
  month: number;
  recipients: [to: string, messages: number][];
}

const limit = (value: number | null) => (value === null ? -1 : value);

export class DeviceBudgets {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(scope: { deviceId: string; sim: number }): string {
    return `${this.prefix}:budget:${scope.deviceId}:${scope.sim}`;
  }

  /**
   * Takes room for each item (in order) that fits every scope now, skipping those that do not (a
   * message to a known recipient may still fit when a new one does not); `retryInMs` is when the
   * soonest skipped one could fit. Or asks for a scope to be seeded from Postgres first.
   */
  async take(scopes: BudgetScope[], items: BudgetItem[]): Promise<BudgetTake> {
    if (items.length === 0) return { taken: [], retryInMs: 0, at: Date.now() };
    const args = [
      ...scopes.flatMap((s) => [
        s.generation,
        limit(s.limits.segmentsPerHour),
        limit(s.limits.segmentsPerDay),
        limit(s.limits.segmentsPerMonth),
        limit(s.limits.uniqueRecipientsPerMonth),
      ]),
      ...items.flatMap((i) => [i.segments, i.to]),
    ];
    const reply = (await this.redis.eval(luaScript('budget-take'), scopes.length, ...scopes.map((s) => this.key(s)), ...args)) as number[];
    const [first, at] = [reply[0]!, reply[1]!];
    if (first === -1) return { seed: scopes[reply[2]! - 1]!, at };
    return { taken: reply.slice(2).map((f) => f === 1), retryInMs: first, at };
  }

  /**
   * Each scope's counts now, as `take` would see them (read only, one round trip for all), with
   * which of `recipients` it counted this month; `seed`: the scope must be seeded first.
   */
  async peek(scopes: BudgetScope[], recipients: string[]): Promise<BudgetPeek[]> {
    if (scopes.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const scope of scopes) pipeline.eval(luaScript('budget-peek'), 1, this.key(scope), scope.generation, ...recipients);
    const replies = (await pipeline.exec()) ?? [];
    return scopes.map((scope, i): BudgetPeek => {
      const [error, raw] = replies[i] ?? [new Error('no reply'), null];
      if (error) throw error;
      const reply = raw as number[];
      if (reply[0] === -1) return { seed: scope, at: reply[1]! };
      const n = reply[4]!;
      const minutes = Array.from({ length: n }, (_, k): [number, number] => [reply[5 + 2 * k]!, reply[6 + 2 * k]!]);
      const flags = reply.slice(5 + 2 * n);
      return {
        at: reply[0]!,
        day: reply[1]!,
        month: reply[2]!,
        recipients: reply[3]!,
        minutes,
        known: new Set(recipients.filter((_, k) => flags[k] === 1)),
      };
    });
  }

  /** Sets a scope's counts from Postgres (as of `at`, the take's time), unless it was seeded meanwhile. */
  async seed(scope: BudgetScope, at: number, counts: BudgetSeed): Promise<void> {
    const args = [scope.generation, at, counts.minutes.length, ...counts.minutes.flat(), counts.day, counts.month, ...counts.recipients.flat()];
    await this.redis.eval(luaScript('budget-seed'), 1, this.key(scope), ...args);
  }

  /** Gives back the room taken at `at` for items that were not handed after all (another dispatcher assigned them first). */
  async release(scopes: { deviceId: string; sim: number }[], at: number, items: BudgetItem[]): Promise<void> {
    if (items.length === 0 || scopes.length === 0) return;
    await this.redis.eval(luaScript('budget-release'), scopes.length, ...scopes.map((s) => this.key(s)), at, ...items.flatMap((i) => [i.segments, i.to]));
  }
}
