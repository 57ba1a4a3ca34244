import type { DispatcherConfig } from '@smsgw/config';
import { isLimitExceeded, quarantinesDue } from '@smsgw/core';
import { failOver, quarantineDevices, type FailedOver, type RetryableFailure, type Sql } from '@smsgw/db/sql';
import type { JobPayload } from '@smsgw/queue';

/** Whether a report is a failure the device says never left it (applied here, not with the other reports). */
export function isRetryableFailure(report: { status: string; retryable?: boolean }): boolean {
  return report.status === 'failed' && report.retryable === true;
}

/**
 * Applies the retryable failures of batches of device reports (docs/devices.md, "Failover"): one
 * statement sends each message back to round-robin or fails it for good; a device at Android's
 * sending limit is paused, and one with QUARANTINE_AFTER_FAILURES retryable failures in a row is
 * quarantined (a compare-and-set, once across dispatchers). The caller enqueues `retried`.
 */
export async function applyRetryableFailures(
  deps: { sql: Sql; config: DispatcherConfig },
  payloads: JobPayload<'device.reports'>[],
): Promise<FailedOver & { quarantined: string[] }> {
  const failures: RetryableFailure[] = payloads.flatMap((payload) =>
    payload.reports.filter(isRetryableFailure).map((r) => ({
      id: r.id,
      deviceId: payload.deviceId,
      at: new Date(r.at ?? payload.receivedAt),
      error: r.error ?? null,
      limitExceeded: isLimitExceeded(r.error),
    })),
  );
  const now = new Date();
  const { config, sql } = deps;
  const result = await failOver(sql, {
    failures,
    now,
    maxAttempts: config.MAX_SEND_ATTEMPTS,
    limitPausedUntil: new Date(now.getTime() + config.LIMIT_EXCEEDED_PAUSE_SECONDS * 1000),
  });
  const due = quarantinesDue(result.devices, { threshold: config.QUARANTINE_AFTER_FAILURES, now });
  return { ...result, quarantined: await quarantineDevices(sql, { devices: due, now }) };
}
