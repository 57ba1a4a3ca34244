import { applyReports, type DeliveryRef, type ReportInput, type ReportStatus, type Sql } from '@smsgw/db/sql';
import type { JobPayload } from '@smsgw/queue';
import { isRetryableFailure } from './failover.ts';

export interface AppliedReports {
  /** The transitions that happened; duplicates and backward reports are not among them. */
  applied: { id: string; status: ReportStatus }[];
  /** Webhook deliveries the transitions wrote, to enqueue. */
  deliveries: DeliveryRef[];
}

/**
 * Applies batches of devices' reports (the payloads of one or more `device.reports` jobs), in
 * lifecycle order so that the acknowledgement (`sending`), `sent` and `delivered` of one message
 * all apply: one compare-and-set statement per step for all of them. A `delivered` report of a
 * message not yet `sent` (its `sent` report is late or lost) also emits `message.sent`.
 */
export async function applyDeviceReports(sql: Sql, payloads: JobPayload<'device.reports'>[]): Promise<AppliedReports> {
  const now = new Date();
  const inputs = (status: ReportStatus): ReportInput[] =>
    payloads.flatMap((payload) =>
      payload.reports
        // Retryable failures have a statement of their own (failover.ts).
        .filter((r) => r.status === status && !isRetryableFailure(r))
        .map((r) => ({ id: r.id, deviceId: payload.deviceId, at: new Date(r.at ?? payload.receivedAt), error: r.error ?? null })),
    );
  const steps = [
    { status: 'sending' as const },
    { status: 'sent' as const },
    { status: 'delivered' as const, from: ['assigned' as const, 'sending' as const], events: ['message.sent' as const, 'message.delivered' as const] },
    { status: 'delivered' as const, from: ['sent' as const] },
    { status: 'failed' as const },
  ];
  const result: AppliedReports = { applied: [], deliveries: [] };
  for (const step of steps) {
    const reports = inputs(step.status);
    if (reports.length === 0) continue;
    const { moved, deliveries } = await applyReports(sql, { reports, now, ...step });
    for (const id of moved) result.applied.push({ id, status: step.status });
    result.deliveries.push(...deliveries);
  }
  return result;
}
