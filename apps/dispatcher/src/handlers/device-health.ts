import type { DispatcherConfig } from '@smsgw/config';
import {
  announcedHealth,
  availabilityWindows,
  hasBudget,
  healthContext,
  readSimBudgets,
  toDeviceRecord,
  type DeviceEventType,
  type HealthStatus,
} from '@smsgw/core';
import { announceHealth, announceTransitions, budgetCounts, healthCandidates, type HealthChange, type Sql } from '@smsgw/db/sql';
import type { WebhooksQueue } from '@smsgw/queue';
import type { Logger } from 'pino';
import { announceDeps } from './announce-deps.ts';
import { MAX_PAGES, PAGE } from './retention.ts';

/** Between online and degraded, at most one announcement per device in this time (hysteresis). */
export const HEALTH_DWELL_SECONDS = 300;

const EVENTS: Record<HealthStatus, DeviceEventType> = { online: 'device.online', degraded: 'device.degraded', offline: 'device.offline' };

/**
 * The sweep's step of device alerts (docs/devices.md, "Alerts"): judges every enabled device and
 * announces each change of its health once (packages/core's announcedHealth says what), by
 * compare-and-set, so that of the dispatchers whose sweeps overlap one announces it. Returns how
 * many devices' recorded health it moved.
 */
export async function announceDeviceHealth(
  deps: { sql: Sql; webhooksQueue: WebhooksQueue; config: DispatcherConfig; log: Logger },
  now: Date,
): Promise<number> {
  const windows = availabilityWindows(deps.config, now);
  const context = healthContext(deps.config, now);
  const options = { now, offlineAfterMs: deps.config.DEVICE_OFFLINE_AFTER_SECONDS * 1000, dwellMs: HEALTH_DWELL_SECONDS * 1000 };
  let moved = 0;
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const devices = await healthCandidates(deps.sql, { after, limit: PAGE });
    const changes: HealthChange[] = [];
    // Devices with carrier budgets are judged with their usage (`budget_exhausted`).
    const budgeted = devices.filter((d) => hasBudget(d) || readSimBudgets(d.simBudgets).length > 0).map((d) => d.id);
    const counts = await budgetCounts(deps.sql, budgeted, now);
    for (const device of devices) {
      const used = budgeted.includes(device.id) ? { budgets: { counts: counts.get(device.id) ?? new Map(), now } } : {};
      const record = toDeviceRecord(device, windows, { ...context, ...used });
      const previous = { status: device.healthStatus, reasons: device.healthReasons, changedAt: device.healthChangedAt };
      const next = announcedHealth(record.health, previous, options);
      if (next === undefined) continue;
      changes.push({ deviceId: device.id, from: previous, to: next.status, reasons: next.reasons, event: next.event ? EVENTS[next.status] : null, record });
    }
    const result = await announceHealth(deps.sql, changes, now);
    await announceTransitions(announceDeps(deps), { deliveries: result.deliveries });
    moved += result.moved.length;
    if (devices.length < PAGE) break;
    after = devices.at(-1)!.id;
  }
  return moved;
}
