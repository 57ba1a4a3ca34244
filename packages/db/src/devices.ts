import {
  BUDGET_FIELDS,
  deviceSimNumbers,
  mergeSimBudgets,
  newId,
  readSimBudgets,
  readSimTwilioSmsUrls,
  type Budgets,
  type DeviceFields,
  type ListPosition,
  type SimBudgetsPatch,
} from '@smsgw/core';
import { assignments, Params, type SqlPool } from './sql.ts';
import { inTransaction } from './sql.ts';
import { DEVICE_TOKEN_PREFIX, generateSecret, hashSecret } from './secrets.ts';

/** A device as stored: the fields of its record (packages/core, toDeviceRecord) and its user. */
export interface DeviceRow extends DeviceFields {
  userId: string;
}

/** The columns of a DeviceRow, of the table aliased `d`. */
export const DEVICE_ROW_COLUMNS = `d.id, d.user_id AS "userId", d.name, d.enabled, d.protocol::text AS protocol, d.last_seen_at AS "lastSeenAt",
  d.stream_seen_at AS "streamSeenAt", d.stream_closed_at AS "streamClosedAt", d.app_version AS "appVersion", d.push_token AS "pushToken",
  d.sim_cards AS "simCards", d.rate_limit_per_minute AS "rateLimitPerMinute", d.rate_limit_per_hour AS "rateLimitPerHour",
  d.rate_limit_per_day AS "rateLimitPerDay", d.created_at AS "createdAt", d.updated_at AS "updatedAt", d.battery_level AS "batteryLevel",
  d.battery_charging AS "batteryCharging", d.signal_dbm AS "signalDbm", d.network, d.failures_in_a_row AS "failuresInARow",
  d.paused_until AS "pausedUntil", d.pause_reason AS "pauseReason", d.segments_per_hour AS "segmentsPerHour",
  d.segments_per_day AS "segmentsPerDay", d.segments_per_month AS "segmentsPerMonth",
  d.unique_recipients_per_month AS "uniqueRecipientsPerMonth", d.sim_budgets AS "simBudgets", d.twilio_sms_url AS "twilioSmsUrl",
  d.sim_twilio_sms_urls AS "simTwilioSmsUrls"`;

/**
 * Registers a native-protocol device (modem agent, simulator); it counts as seen only once it
 * connects. The token is returned this once.
 */
export async function createDevice(sql: SqlPool, options: { userId: string; name: string }): Promise<{ token: string; device: DeviceRow }> {
  const token = generateSecret(DEVICE_TOKEN_PREFIX);
  const { rows } = await sql.query<DeviceRow>(
    `INSERT INTO devices AS d (id, user_id, name, token_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${DEVICE_ROW_COLUMNS}`,
    [newId(), options.userId, options.name, hashSecret(token), new Date()],
  );
  return { token, device: rows[0]! };
}

export async function listDevices(sql: SqlPool, userId: string): Promise<DeviceRow[]> {
  const { rows } = await sql.query<DeviceRow>(
    `SELECT ${DEVICE_ROW_COLUMNS} FROM devices d WHERE d.user_id = $1 AND d.deleted_at IS NULL ORDER BY d.created_at, d.id`,
    [userId],
  );
  return rows;
}

/**
 * One page of the user's devices in the order of registration (oldest first, as listDevices), by
 * keyset: the page after `after`, whatever was registered or deleted since; `next` is set when
 * devices follow. A page costs the same whether the user has ten devices or thousands.
 */
export async function pageDevices(
  sql: SqlPool,
  options: { userId: string; limit: number; after?: ListPosition },
): Promise<{ rows: DeviceRow[]; next: ListPosition | null }> {
  const { userId, limit, after } = options;
  const { rows } = await sql.query<DeviceRow>(
    `SELECT ${DEVICE_ROW_COLUMNS} FROM devices d
      WHERE d.user_id = $1 AND d.deleted_at IS NULL AND ($2::timestamptz IS NULL OR (d.created_at, d.id) > ($2, $3::uuid))
      ORDER BY d.created_at, d.id LIMIT $4`,
    [userId, after?.createdAt ?? null, after?.id ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** How many devices the user has (deleted ones not counted). */
export async function countDevices(sql: SqlPool, userId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM devices WHERE user_id = $1 AND deleted_at IS NULL', [userId]);
  return rows[0]!.n;
}

export async function findDevice(sql: SqlPool, options: { userId: string; id: string }): Promise<DeviceRow | null> {
  const { rows } = await sql.query<DeviceRow>(`SELECT ${DEVICE_ROW_COLUMNS} FROM devices d WHERE d.id = $1 AND d.user_id = $2 AND d.deleted_at IS NULL`, [
    options.id,
    options.userId,
  ]);
  return rows[0] ?? null;
}

export async function updateDevice(
  sql: SqlPool,
  options: {
    userId: string;
    id: string;
    name?: string;
    enabled?: boolean;
    /** Pacing: a number sets the limit, null removes it, undefined leaves it. */
    rateLimitPerMinute?: number | null;
    rateLimitPerHour?: number | null;
    rateLimitPerDay?: number | null;
    /** Carrier budgets of the device as a whole: a number sets, null removes, undefined leaves. */
    budgets?: Partial<Budgets>;
    /** Twilio's incoming-SMS URL (checked by the caller): a URL sets it, null removes it, undefined leaves it. */
    twilioSmsUrl?: string | null;
    /** Per-SIM budgets and Twilio URLs, merged into the stored ones; a SIM the device does not have is refused (invalid_request). */
    sims?: SimPatch[];
  },
): Promise<DeviceRow | null> {
  const { budgets = {}, sims } = options;
  const now = new Date();
  const simBudgetsChange = sims?.some((sim) => BUDGET_FIELDS.some(([field]) => sim[field] !== undefined)) ?? false;
  const budgetsChange = Object.values(budgets).some((v) => v !== undefined) || simBudgetsChange;
  // One transaction, the row locked, so that two PATCHes of different SIMs both stay and a refused SIM changes nothing.
  return inTransaction(sql, async (tx) => {
    const { rows: current } = await tx.query<{ sim_budgets: unknown; sim_cards: unknown; sim_twilio_sms_urls: unknown }>(
      'SELECT sim_budgets, sim_cards, sim_twilio_sms_urls FROM devices WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL FOR UPDATE',
      [options.id, options.userId],
    );
    if (current.length === 0) return null;
    const simBudgets = sims === undefined ? undefined : mergeSimBudgets(readSimBudgets(current[0]!.sim_budgets), sims, deviceSimNumbers(current[0]!.sim_cards));
    const simUrls = sims?.some((sim) => sim.twilio_sms_url !== undefined) ? mergeSimUrls(current[0]!.sim_twilio_sms_urls, sims) : undefined;
    const p = new Params();
    const set = assignments(p, {
      name: options.name,
      enabled: options.enabled,
      rate_limit_per_minute: options.rateLimitPerMinute,
      rate_limit_per_hour: options.rateLimitPerHour,
      rate_limit_per_day: options.rateLimitPerDay,
      twilio_sms_url: options.twilioSmsUrl,
      ...Object.fromEntries(BUDGET_FIELDS.map(([column, field]) => [column, budgets[field]])),
      sim_budgets: simBudgets && JSON.stringify(simBudgets),
      sim_twilio_sms_urls: simUrls === undefined ? undefined : simUrls && JSON.stringify(simUrls),
      budgets_changed_at: budgetsChange ? now : undefined,
      updated_at: now,
    });
    const { rows } = await tx.query<DeviceRow>(`UPDATE devices d SET ${set} WHERE d.id = ${p.add(options.id)} RETURNING ${DEVICE_ROW_COLUMNS}`, p.values);
    return rows[0] ?? null;
  });
}

/** A per-SIM change of a PATCH: its budgets, and its Twilio incoming-SMS URL (null removes it). */
export type SimPatch = SimBudgetsPatch & { twilio_sms_url?: string | null };

/** The SIMs' Twilio URLs after a PATCH (jsonb `{"2": url}`), null when none is left. */
function mergeSimUrls(stored: unknown, sims: SimPatch[]): Record<string, string> | null {
  const urls = readSimTwilioSmsUrls(stored);
  for (const sim of sims) {
    if (sim.twilio_sms_url === null) urls.delete(sim.sim_number);
    else if (sim.twilio_sms_url !== undefined) urls.set(sim.sim_number, sim.twilio_sms_url);
  }
  return urls.size === 0 ? null : Object.fromEntries([...urls].sort(([a], [b]) => a - b).map(([sim, url]) => [String(sim), url]));
}

/** Deletes a device: its token stops working and it is never assigned again; its messages keep its id. */
export async function deleteDevice(sql: SqlPool, options: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query(
    'UPDATE devices SET deleted_at = $3, enabled = false, updated_at = $3 WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL',
    [options.id, options.userId, new Date()],
  );
  return rowCount === 1;
}

/** Issues a new token for a device; the old one stops working. */
export async function rotateDeviceToken(sql: SqlPool, options: { userId: string; id: string }): Promise<string | null> {
  const token = generateSecret(DEVICE_TOKEN_PREFIX);
  const { rowCount } = await sql.query('UPDATE devices SET token_hash = $3, updated_at = $4 WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL', [
    options.id,
    options.userId,
    hashSecret(token),
    new Date(),
  ]);
  return rowCount === 1 ? token : null;
}
