import type { CliConfig } from '@smsgw/config';
import { availabilityWindows, healthContext, toDeviceRecord, type BudgetCounts } from '@smsgw/core';
import { budgetCounts, type ApiKeyRow, type DeviceRow, type Sql, type UserDetailRow, type WebhookDeliveryRow, type WebhookRow } from '@smsgw/db';

// The JSON of each resource, in the shape and field names of the API's records (docs/http-api.md),
// so that a script reads the CLI's output and the API's responses alike.

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function userRecord(user: UserDetailRow) {
  return {
    id: user.id,
    name: user.name,
    monthly_quota: user.monthlyQuota,
    disabled: user.disabledAt !== null,
    disabled_at: iso(user.disabledAt),
    created_at: user.createdAt.toISOString(),
  };
}

export function apiKeyRecord(key: ApiKeyRow) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: iso(key.lastUsedAt),
    revoked_at: iso(key.revokedAt),
  };
}

export function deviceRecord(device: DeviceRow, config: CliConfig, now: Date, counts?: Map<number, BudgetCounts>) {
  return toDeviceRecord(device, availabilityWindows(config, now), { ...healthContext(config, now), ...(counts && { budgets: { counts, now } }) });
}

/** Device records with their carrier budgets' usage, as the API shows them (one statement for all). */
export async function deviceRecords(sql: Sql, devices: DeviceRow[], config: CliConfig) {
  const now = new Date();
  const counts = await budgetCounts(
    sql,
    devices.map((d) => d.id),
    now,
  );
  return devices.map((device) => deviceRecord(device, config, now, counts.get(device.id) ?? new Map()));
}

export function webhookRecord(webhook: WebhookRow) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    description: webhook.description,
    enabled: webhook.enabled,
    disabled_reason: webhook.disabledReason,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

export function deliveryRecord(delivery: WebhookDeliveryRow) {
  return {
    id: delivery.id,
    type: delivery.type,
    message_id: delivery.messageId,
    state: delivery.state,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    last_attempt_at: iso(delivery.lastAttemptAt),
    next_attempt_at: iso(delivery.nextAttemptAt),
    created_at: delivery.createdAt.toISOString(),
  };
}
