import { applyReports, type Sql, type ReportStatus } from '@smsgw/db/sql';
import type { JobPayload } from '@smsgw/queue';

const ORDER: ReportStatus[] = ['sent', 'delivered', 'failed'];

/**
 * Applies a device's batch of reports: one compare-and-set statement per status, in lifecycle
 * order, so that `sent` and `delivered` of one message in one batch both apply. Returns the
 * transitions that happened; duplicates and backward reports are not among them.
 */
export async function applyDeviceReports(
  sql: Sql,
  payload: JobPayload<'device.reports'>,
): Promise<{ id: string; status: ReportStatus }[]> {
  const receivedAt = new Date(payload.receivedAt);
  const now = new Date();
  const applied: { id: string; status: ReportStatus }[] = [];
  for (const status of ORDER) {
    const reports = payload.reports
      .filter((r) => r.status === status)
      .map((r) => ({ id: r.id, at: r.at ? new Date(r.at) : receivedAt, error: r.error ?? null }));
    const moved = await applyReports(sql, { deviceId: payload.deviceId, status, reports, now });
    for (const id of moved) applied.push({ id, status });
  }
  return applied;
}
