import {
  HEALTH_REASONS,
  PING_EVENT_TYPE,
  type DeviceEventType,
  type DeviceFields,
  type DeviceRecord,
  type HealthReason,
  type HealthReport,
  type HealthStatus,
} from '@smsgw/core';
import type { Sql } from './sql.ts';
import type { DeliveryRef } from './webhook-deliveries.ts';

/**
 * The statements of device health (docs/devices.md, "Health" and "Alerts"): what a device reports
 * of itself, and the announced health status, moved by compare-and-set together with the webhook
 * deliveries that announce it.
 */

/** A device's report of itself: only the fields it sent. */
export interface DeviceHealthReport {
  deviceId: string;
  report: Partial<HealthReport>;
}

/**
 * Records devices' reports of themselves (only the fields each sent; of two reports of one device,
 * the later's fields win) and that they were seen, in one statement that locks the devices in id
 * order; in the same statement, a `device.ping` delivery to each of the user's enabled SMS Gate
 * `system:ping` endpoints (their device filter applying) that had none for the device within the
 * ping interval: the account's SMS Gate `ping.interval_seconds` when it is a positive number, else
 * `defaultPingSeconds` (what smsgw asks of the phones). So a device reporting more often than that
 * pings no more often. Returns the deliveries to enqueue.
 */
export async function recordHealthReports(sql: Sql, reports: DeviceHealthReport[], now: Date, defaultPingSeconds: number): Promise<DeliveryRef[]> {
  const merged = new Map<string, Partial<HealthReport>>();
  for (const { deviceId, report } of reports) {
    const known = merged.get(deviceId) ?? {};
    for (const [key, value] of Object.entries(report)) if (value !== undefined) Object.assign(known, { [key]: value });
    merged.set(deviceId, known);
  }
  if (merged.size === 0) return [];
  const column = <K extends keyof HealthReport>(key: K) => [...merged.values()].map((r) => r[key] ?? null);
  const given = (key: keyof HealthReport) => [...merged.values()].map((r) => r[key] !== undefined);
  const interval = `CASE WHEN jsonb_typeof(s.settings->'ping'->'interval_seconds') = 'number'
      AND (s.settings->'ping'->>'interval_seconds')::numeric > 0 THEN (s.settings->'ping'->>'interval_seconds')::numeric ELSE $12 END`;
  const { rows } = await sql.query<{ id: string; webhook_id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $3::boolean[], $4::int[], $5::boolean[], $6::boolean[], $7::boolean[], $8::int[], $9::boolean[], $10::text[])
         AS i(id, battery_given, battery_level, charging_given, battery_charging, signal_given, signal_dbm, network_given, network)
     ), seen AS (
       UPDATE devices d SET
         battery_level = CASE WHEN i.battery_given THEN i.battery_level ELSE d.battery_level END,
         battery_charging = CASE WHEN i.charging_given THEN i.battery_charging ELSE d.battery_charging END,
         signal_dbm = CASE WHEN i.signal_given THEN i.signal_dbm ELSE d.signal_dbm END,
         network = CASE WHEN i.network_given THEN i.network ELSE d.network END,
         health_reported_at = $2, last_seen_at = greatest(d.last_seen_at, $2)
       FROM (SELECT id FROM devices WHERE id IN (SELECT id FROM input) ORDER BY id FOR UPDATE) locked, input i
       WHERE d.id = locked.id AND i.id = locked.id
       RETURNING d.id, d.user_id, d.battery_level, d.battery_charging, d.app_version
     )
     INSERT INTO webhook_deliveries (id, webhook_id, user_id, type, occurred_at, data, created_at)
     SELECT gen_random_uuid(), w.id, w.user_id, $11, $2,
            jsonb_build_object('device_id', seen.id, 'battery_level', seen.battery_level, 'battery_charging', seen.battery_charging, 'app_version', seen.app_version), $2
     FROM seen
     JOIN webhooks w ON w.user_id = seen.user_id AND w.enabled AND $11 = ANY(w.events) AND (w.device_id IS NULL OR w.device_id = seen.id)
     LEFT JOIN sms_gate_settings s ON s.user_id = seen.user_id
     WHERE NOT EXISTS (
       SELECT 1 FROM webhook_deliveries d
       WHERE d.webhook_id = w.id AND d.created_at > $2::timestamptz - make_interval(secs => ${interval}) AND d.data->>'device_id' = seen.id::text
     )
     RETURNING id, webhook_id`,
    [
      [...merged.keys()],
      now,
      given('batteryLevel'),
      column('batteryLevel'),
      given('batteryCharging'),
      column('batteryCharging'),
      given('signalDbm'),
      column('signalDbm'),
      given('network'),
      column('network'),
      PING_EVENT_TYPE,
      defaultPingSeconds,
    ],
  );
  return rows.map((r) => ({ id: r.id, webhookId: r.webhook_id }));
}

/** A device the sweep judges: its record's fields, its user and its last announcement. */
export interface HealthCandidate extends DeviceFields {
  userId: string;
  healthStatus: HealthStatus | null;
  healthReasons: string[];
  healthChangedAt: Date | null;
}

/** Enabled devices that were ever seen (a device is judged from its first request on), a page at a time in id order after `after`. */
export async function healthCandidates(sql: Sql, options: { after?: string; limit: number }): Promise<HealthCandidate[]> {
  const { rows } = await sql.query<Record<string, never>>(
    `SELECT id, user_id, name, enabled, protocol, last_seen_at, stream_seen_at, stream_closed_at, app_version, push_token, sim_cards,
            rate_limit_per_minute, rate_limit_per_hour, rate_limit_per_day, segments_per_hour, segments_per_day, segments_per_month,
            unique_recipients_per_month, sim_budgets, twilio_sms_url, sim_twilio_sms_urls, battery_level, battery_charging, signal_dbm, network,
            failures_in_a_row, paused_until, pause_reason, created_at, updated_at, health_status, health_reasons, health_changed_at
     FROM devices WHERE enabled AND deleted_at IS NULL AND last_seen_at IS NOT NULL AND id > $1::uuid ORDER BY id LIMIT $2`,
    [options.after ?? '00000000-0000-0000-0000-000000000000', options.limit],
  );
  return rows.map((r: Record<string, unknown>) => ({
    id: r.id as string,
    userId: r.user_id as string,
    name: r.name as string,
    enabled: r.enabled as boolean,
    protocol: r.protocol as DeviceFields['protocol'],
    lastSeenAt: r.last_seen_at as Date | null,
    streamSeenAt: r.stream_seen_at as Date | null,
    streamClosedAt: r.stream_closed_at as Date | null,
    appVersion: r.app_version as string | null,
    pushToken: r.push_token as boolean,
    simCards: r.sim_cards,
    rateLimitPerMinute: r.rate_limit_per_minute as number | null,
    rateLimitPerHour: r.rate_limit_per_hour as number | null,
    rateLimitPerDay: r.rate_limit_per_day as number | null,
    segmentsPerHour: r.segments_per_hour as number | null,
    segmentsPerDay: r.segments_per_day as number | null,
    segmentsPerMonth: r.segments_per_month as number | null,
    uniqueRecipientsPerMonth: r.unique_recipients_per_month as number | null,
    simBudgets: r.sim_budgets,
    twilioSmsUrl: r.twilio_sms_url as string | null,
    simTwilioSmsUrls: r.sim_twilio_sms_urls,
    batteryLevel: r.battery_level as number | null,
    batteryCharging: r.battery_charging as boolean | null,
    signalDbm: r.signal_dbm as number | null,
    network: r.network as string | null,
    failuresInARow: r.failures_in_a_row as number,
    pausedUntil: r.paused_until as Date | null,
    pauseReason: r.pause_reason as string | null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    healthStatus: r.health_status as HealthStatus | null,
    healthReasons: (r.health_reasons as string[] | null) ?? [],
    healthChangedAt: r.health_changed_at as Date | null,
  }));
}

/**
 * One record of a device's health: its status and reasons move from `from` to `to`/`reasons`;
 * `event` null records them without a webhook event (a device's first status, new reasons of the
 * same status).
 */
export interface HealthChange {
  deviceId: string;
  from: { status: HealthStatus | null; reasons: readonly string[] };
  to: HealthStatus;
  reasons: readonly string[];
  event: DeviceEventType | null;
  record: DeviceRecord;
}

/**
 * Moves each device's recorded health if it is still `from` (so of two dispatchers judging the
 * same device, one moves it), and writes in the same statement one delivery per enabled endpoint of
 * the device's user subscribed to the event. `health_changed_at`, which the dwell counts from,
 * moves with the status or an event, not with reasons recorded silently. Returns the devices moved
 * and the deliveries to enqueue.
 */
export async function announceHealth(sql: Sql, changes: HealthChange[], now: Date): Promise<{ moved: string[]; deliveries: DeliveryRef[] }> {
  if (changes.length === 0) return { moved: [], deliveries: [] };
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null }>(
    `WITH c AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[], $5::jsonb[], $6::text[], $7::jsonb[])
         AS c(id, from_status, from_reasons, to_status, to_reasons, event, record)
     ), moved AS (
       UPDATE devices d SET health_status = c.to_status, health_reasons = ARRAY(SELECT jsonb_array_elements_text(c.to_reasons)),
         health_changed_at = CASE WHEN c.event IS NOT NULL OR d.health_status IS DISTINCT FROM c.to_status THEN $8 ELSE d.health_changed_at END
       FROM c WHERE d.id = c.id AND d.health_status IS NOT DISTINCT FROM c.from_status
         AND coalesce(d.health_reasons, ARRAY[]::text[]) = ARRAY(SELECT jsonb_array_elements_text(c.from_reasons))
       RETURNING d.id, d.user_id, c.event, c.record
     ), hooks AS (
       INSERT INTO webhook_deliveries (id, webhook_id, user_id, type, occurred_at, data)
       SELECT gen_random_uuid(), w.id, w.user_id, moved.event, $8, moved.record
       FROM moved JOIN webhooks w ON w.user_id = moved.user_id AND w.enabled
       WHERE moved.event IS NOT NULL AND moved.event = ANY(w.events)
       RETURNING id, webhook_id
     )
     SELECT 'moved' AS kind, id, NULL::uuid AS webhook_id FROM moved
     UNION ALL SELECT 'delivery', id, webhook_id FROM hooks`,
    [
      changes.map((c) => c.deviceId),
      changes.map((c) => c.from.status),
      changes.map((c) => JSON.stringify(c.from.reasons)),
      changes.map((c) => c.to),
      changes.map((c) => JSON.stringify(c.reasons)),
      changes.map((c) => c.event),
      changes.map((c) => JSON.stringify(c.record)),
      now,
    ],
  );
  return {
    moved: rows.filter((r) => r.kind === 'moved').map((r) => r.id),
    deliveries: rows.filter((r) => r.kind === 'delivery').map((r) => ({ id: r.id, webhookId: r.webhook_id! })),
  };
}

/** Enabled devices by their announced health status (the status of the alerts), for the metrics. */
export async function devicesByHealth(sql: Sql): Promise<Record<HealthStatus, number>> {
  const { rows } = await sql.query<{ status: HealthStatus | null; count: string }>(
    `SELECT coalesce(health_status, 'offline') AS status, count(*) AS count FROM devices WHERE enabled AND deleted_at IS NULL GROUP BY 1`,
  );
  const counts: Record<HealthStatus, number> = { online: 0, degraded: 0, offline: 0 };
  for (const row of rows) counts[row.status as HealthStatus] = Number(row.count);
  return counts;
}

/** Enabled devices by each reason of their announced health (`budget_exhausted`, …), for the metrics. */
export async function devicesByHealthReason(sql: Sql): Promise<Record<HealthReason, number>> {
  const { rows } = await sql.query<{ reason: string; count: string }>(
    `SELECT reason, count(*) AS count FROM devices, unnest(health_reasons) AS reason WHERE enabled AND deleted_at IS NULL GROUP BY 1`,
  );
  const counts = Object.fromEntries(HEALTH_REASONS.map((reason) => [reason, 0])) as Record<HealthReason, number>;
  // A reason of a later version, recorded before a rollback, is left out rather than made a label.
  for (const row of rows) if (row.reason in counts) counts[row.reason as HealthReason] = Number(row.count);
  return counts;
}
