import { budgetWindows, deviceSimNumbers, hasBudget, MINUTE_MS, readSimBudgets, type BudgetCounts, type DeviceBudgetLimits } from '@smsgw/core';
import type { Sql } from './sql.ts';

// The statements of carrier budgets (docs/devices.md, "Carrier budgets"): the devices' limits and
// what Postgres (the record) says each device and SIM was handed in its windows: shown as usage,
// and the seed of the shared counters in Redis.

/** The budgets of those of `deviceIds` that have any (devices without one are left out). */
export async function deviceBudgetLimits(sql: Sql, deviceIds: string[]): Promise<Map<string, DeviceBudgetLimits>> {
  if (deviceIds.length === 0) return new Map();
  const { rows } = await sql.query<{
    id: string;
    per_hour: number | null;
    per_day: number | null;
    per_month: number | null;
    recipients: number | null;
    sim_budgets: unknown;
    sim_cards: unknown;
    changed: Date | null;
  }>(
    `SELECT id, segments_per_hour AS per_hour, segments_per_day AS per_day, segments_per_month AS per_month,
            unique_recipients_per_month AS recipients, sim_budgets, sim_cards, budgets_changed_at AS changed
       FROM devices
      WHERE id = ANY($1::uuid[])
        AND (segments_per_hour IS NOT NULL OR segments_per_day IS NOT NULL OR segments_per_month IS NOT NULL
             OR unique_recipients_per_month IS NOT NULL OR jsonb_array_length(coalesce(sim_budgets, '[]')) > 0)`,
    [deviceIds],
  );
  const limits = new Map<string, DeviceBudgetLimits>();
  for (const r of rows) {
    const device = { segmentsPerHour: r.per_hour, segmentsPerDay: r.per_day, segmentsPerMonth: r.per_month, uniqueRecipientsPerMonth: r.recipients };
    const simNumbers = deviceSimNumbers(r.sim_cards);
    const sims = readSimBudgets(r.sim_budgets).filter((s) => simNumbers.includes(s.simNumber));
    if (hasBudget(device) || sims.length > 0) limits.set(r.id, { device, sims, simNumbers, generation: String(r.changed?.getTime() ?? 0) });
  }
  return limits;
}

// The messages a device (or one of its SIMs: $2, 0 for the whole device) was handed since $3.
const HANDED = `FROM messages WHERE device_id = $1::uuid AND ($2::int = 0 OR sim_number = $2::int) AND assigned_at >= $3`;

/**
 * A scope's counts as of `at` (Redis's time of the take that asked): parts per minute in the
 * rolling hour, the UTC day's and month's parts, and the month's recipients with their messages.
 */
export async function budgetSeed(sql: Sql, options: { deviceId: string; sim: number; at: number }) {
  const w = budgetWindows(new Date(options.at));
  const since = new Date(Math.min(w.hourStart.getTime(), w.monthStart.getTime()));
  const { rows } = await sql.query<{ kind: string; key: string; value: string }>(
    `WITH handed AS (SELECT assigned_at, segments, to_number ${HANDED})
     SELECT 'minute' AS kind, floor(extract(epoch FROM assigned_at) * 1000 / ${MINUTE_MS})::text AS key, sum(segments)::text AS value
       FROM handed WHERE assigned_at >= $4 GROUP BY 2
     UNION ALL SELECT 'day', '', coalesce(sum(segments), 0)::text FROM handed WHERE assigned_at >= $5
     UNION ALL SELECT 'month', '', coalesce(sum(segments), 0)::text FROM handed WHERE assigned_at >= $6
     UNION ALL SELECT 'to', to_number, count(*)::text FROM handed WHERE assigned_at >= $6 GROUP BY to_number`,
    [options.deviceId, options.sim, since, w.hourStart, w.dayStart, w.monthStart],
  );
  return {
    minutes: rows.filter((r) => r.kind === 'minute').map((r): [number, number] => [Number(r.key), Number(r.value)]),
    day: Number(rows.find((r) => r.kind === 'day')?.value ?? 0),
    month: Number(rows.find((r) => r.kind === 'month')?.value ?? 0),
    recipients: rows.filter((r) => r.kind === 'to').map((r): [string, number] => [r.key, Number(r.value)]),
  };
}

/** Per device: its counts as a whole (`sim` 0) and per SIM it sent from, at `now`; one statement for all. */
export async function budgetCounts(sql: Sql, deviceIds: string[], now: Date): Promise<Map<string, Map<number, BudgetCounts>>> {
  const counts = new Map<string, Map<number, BudgetCounts>>();
  if (deviceIds.length === 0) return counts;
  const w = budgetWindows(now);
  const { rows } = await sql.query<{
    device_id: string;
    sim: number;
    hour: string;
    hour_oldest: Date | null;
    day: string;
    month: string;
    recipients: string;
  }>(
    `SELECT device_id, CASE WHEN grouping(sim_number) = 1 THEN 0 ELSE sim_number END AS sim,
            coalesce(sum(segments) FILTER (WHERE assigned_at >= $3), 0) AS hour,
            min(assigned_at) FILTER (WHERE assigned_at >= $3) AS hour_oldest,
            coalesce(sum(segments) FILTER (WHERE assigned_at >= $4), 0) AS day,
            coalesce(sum(segments) FILTER (WHERE assigned_at >= $5), 0) AS month,
            count(DISTINCT to_number) FILTER (WHERE assigned_at >= $5) AS recipients
       FROM messages
      WHERE device_id = ANY($1::uuid[]) AND assigned_at >= $2
      GROUP BY GROUPING SETS ((device_id), (device_id, sim_number))
     HAVING grouping(sim_number) = 1 OR sim_number IS NOT NULL`,
    [deviceIds, new Date(Math.min(w.hourStart.getTime(), w.monthStart.getTime())), w.hourStart, w.dayStart, w.monthStart],
  );
  for (const r of rows) {
    const bySim = counts.get(r.device_id) ?? new Map<number, BudgetCounts>();
    bySim.set(r.sim, { hour: Number(r.hour), hourOldest: r.hour_oldest, day: Number(r.day), month: Number(r.month), recipients: Number(r.recipients) });
    counts.set(r.device_id, bySim);
  }
  return counts;
}
