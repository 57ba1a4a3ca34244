import { deviceConnection, type AvailabilityWindows } from './device-availability.ts';
import { deviceHealth, type HealthContext, type HealthReport } from './device-health.ts';
import type { DeviceProtocol } from './device-protocols.ts';
import {
  budgetExhausted,
  budgetUsage,
  BUDGET_FIELDS,
  deviceSimNumbers,
  NO_BUDGETS,
  NO_COUNTS,
  readSimBudgets,
  type BudgetCounts,
  type BudgetUsage,
} from './carrier-budgets.ts';

/** The SIMs' own Twilio incoming-SMS URLs as stored (jsonb `devices.sim_twilio_sms_urls`, `{"2": url}`), by SIM number. */
export function readSimTwilioSmsUrls(stored: unknown): Map<number, string> {
  const urls = new Map<number, string>();
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return urls;
  for (const [sim, url] of Object.entries(stored)) if (/^[1-9]\d*$/.test(sim) && typeof url === 'string') urls.set(Number(sim), url);
  return urls;
}

/** What a device record is made of: the stored device (packages/db's DeviceRow has these fields). */
export interface DeviceFields extends HealthReport {
  id: string;
  name: string;
  enabled: boolean;
  protocol: DeviceProtocol;
  lastSeenAt: Date | null;
  streamSeenAt: Date | null;
  streamClosedAt: Date | null;
  appVersion: string | null;
  pushToken: boolean;
  simCards: unknown;
  rateLimitPerMinute: number | null;
  rateLimitPerHour: number | null;
  rateLimitPerDay: number | null;
  segmentsPerHour: number | null;
  segmentsPerDay: number | null;
  segmentsPerMonth: number | null;
  uniqueRecipientsPerMonth: number | null;
  /** The stored per-SIM budgets (jsonb, packages/core's readSimBudgets). */
  simBudgets: unknown;
  /** Twilio's incoming-SMS URL of the device, and the SIMs' own (jsonb `{"2": url}`, readSimTwilioSmsUrls). */
  twilioSmsUrl: string | null;
  simTwilioSmsUrls: unknown;
  failuresInARow: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What the record knows besides the device row: health's context and the budgets' counts. */
export interface RecordContext extends HealthContext {
  /** What the device (SIM 0) and each SIM were handed in their windows, at `now` (packages/db's budgetCounts). */
  budgets?: { counts: Map<number, BudgetCounts>; now: Date };
}

/**
 * The device as the API, the CLI and the device webhook events show it (docs/http-api.md,
 * "Devices"), connection and health judged by `windows`.
 */
export function toDeviceRecord(device: DeviceFields, windows: AvailabilityWindows, context: RecordContext = {}) {
  const { available, connection, warnings } = deviceConnection(device, windows);
  const sims = readSimBudgets(device.simBudgets);
  const simUrls = readSimTwilioSmsUrls(device.simTwilioSmsUrls);
  const usage = context.budgets && deviceBudgetUsage(device, sims, context.budgets);
  const health = usage ? { ...context, budgetExhausted: usage.exhausted } : context;
  return {
    id: device.id,
    name: device.name,
    enabled: device.enabled,
    protocol: device.protocol,
    available,
    connection,
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    app_version: device.appVersion,
    sim_cards: Array.isArray(device.simCards) ? (device.simCards as unknown[]) : null,
    warnings,
    health: deviceHealth(device, windows, health),
    rate_limit_per_minute: device.rateLimitPerMinute,
    rate_limit_per_hour: device.rateLimitPerHour,
    rate_limit_per_day: device.rateLimitPerDay,
    segments_per_hour: device.segmentsPerHour,
    segments_per_day: device.segmentsPerDay,
    segments_per_month: device.segmentsPerMonth,
    unique_recipients_per_month: device.uniqueRecipientsPerMonth,
    twilio_sms_url: device.twilioSmsUrl,
    // The SIMs with a budget or a Twilio URL of their own.
    sims: [...new Set([...sims.map((s) => s.simNumber), ...simUrls.keys()])]
      .sort((a, b) => a - b)
      .map((simNumber) => {
        const sim = sims.find((s) => s.simNumber === simNumber) ?? { ...NO_BUDGETS, simNumber };
        return {
          sim_number: simNumber,
          ...(Object.fromEntries(BUDGET_FIELDS.map(([field, key]) => [field, sim[key]])) as Record<(typeof BUDGET_FIELDS)[number][0], number | null>),
          twilio_sms_url: simUrls.get(simNumber) ?? null,
        };
      }),
    usage: usage ? usage.shown : null,
    created_at: device.createdAt.toISOString(),
    updated_at: device.updatedAt.toISOString(),
  };
}

export type DeviceRecord = ReturnType<typeof toDeviceRecord>;

function deviceBudgetUsage(device: DeviceFields, sims: ReturnType<typeof readSimBudgets>, budgets: NonNullable<RecordContext['budgets']>) {
  const counts = (sim: number) => budgets.counts.get(sim) ?? NO_COUNTS;
  const whole = budgetUsage(device, counts(0), budgets.now);
  const bySim: { simNumber: number; usage: BudgetUsage }[] = sims.map((s) => ({
    simNumber: s.simNumber,
    usage: budgetUsage(s, counts(s.simNumber), budgets.now),
  }));
  return {
    exhausted: budgetExhausted(whole, bySim, deviceSimNumbers(device.simCards)),
    shown: { ...whole, sims: bySim.map((s) => ({ sim_number: s.simNumber, ...s.usage })) },
  };
}
