import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import { Batcher, type BurstLog } from '@smsgw/core';
import { announceTransitions, type Sql } from '@smsgw/db/sql';
import { enqueueDispatch, type DispatchQueue, type JobPayload, type WebhooksQueue, type RedisClient } from '@smsgw/queue';
import type { DispatcherMetrics } from '../metrics.ts';
import { applyDeviceReports } from './apply-reports.ts';
import { announceDeps } from './announce-deps.ts';
import { applyRetryableFailures } from './failover.ts';
import type { Handler } from './job-handler.ts';

// Most devices' report lists (each up to the device protocol's limit of reports) applied together.
const REPORT_JOBS_PER_BATCH = 64;
// How long the first report list waits for others: a batch costs about one statement per lifecycle
// step whatever its size, and no device waits on it (its request was answered when Redis took it).
const REPORT_LINGER_MS = 10;

export interface DeviceReportsDeps {
  sql: Sql;
  redis: RedisClient;
  dispatchQueue: DispatchQueue;
  webhooksQueue: WebhooksQueue;
  config: DispatcherConfig;
  log: Logger;
  incidents: BurstLog;
  metrics: DispatcherMetrics;
}

/**
 * The report jobs: `device.reports.v2` (several devices' reports, as API processes enqueue them)
 * and `device.reports` (one device's, from API processes of earlier versions). The devices'
 * reports of the jobs taken together are applied together, one statement per lifecycle step for
 * all of them, then their retryable failures fail over. Each job's result is the number of its
 * reports that moved a message.
 */
export function deviceReportsHandlers(deps: DeviceReportsDeps): {
  'device.reports': Handler<'device.reports'>;
  'device.reports.v2': Handler<'device.reports.v2'>;
} {
  const { sql, config, log, metrics } = deps;
  const announcing = announceDeps(deps);

  /** Counts the state changes that reports caused, in all and by the device that reported each (`deviceOf` its message id). */
  const count = (deviceOf: Map<string, string>, moved: { id: string; state: string }[]) => {
    for (const { id, state } of moved) {
      metrics.transitions.inc({ state });
      const device = deviceOf.get(id);
      if (device) metrics.deviceTransitions.inc({ device_id: device, state });
    }
  };

  /** The payloads' retryable failures: back to round-robin (enqueued here) or failed for good. */
  const failOverReports = async (payloads: JobPayload<'device.reports'>[], deviceOf: Map<string, string>): Promise<string[]> => {
    const failover = await applyRetryableFailures({ sql, config }, payloads);
    count(deviceOf, [...failover.retried.map((id) => ({ id, state: 'pending' })), ...failover.failed.map((id) => ({ id, state: 'failed' }))]);
    if (failover.quarantined.length > 0) log.warn({ devices: failover.quarantined }, 'devices quarantined after retryable failures in a row');
    // If Redis refuses the jobs, the outbox sweep enqueues the pending messages.
    if (failover.retried.length > 0)
      await enqueueDispatch(deps.dispatchQueue, failover.retried).catch((error: unknown) =>
        deps.incidents.report('failover enqueue failed: left to the outbox sweep', error),
      );
    await announceTransitions(announcing, { moved: [...failover.retried, ...failover.failed], deliveries: failover.deliveries });
    return [...failover.retried, ...failover.failed];
  };

  const reporter = new Batcher<JobPayload<'device.reports'>, number>(
    async (payloads) => {
      const { applied, deliveries } = await applyDeviceReports(sql, payloads);
      const deviceOf = new Map(payloads.flatMap(({ deviceId, reports }) => reports.map((r) => [r.id, deviceId] as const)));
      count(
        deviceOf,
        applied.map(({ id, status }) => ({ id, state: status })),
      );
      await announceTransitions(announcing, { moved: applied.map((a) => a.id), deliveries });
      const moved = new Set([...applied.map((a) => a.id), ...(await failOverReports(payloads, deviceOf))]);
      return payloads.map((payload) => payload.reports.filter((r) => moved.has(r.id)).length);
    },
    REPORT_JOBS_PER_BATCH,
    REPORT_LINGER_MS,
  );

  return {
    'device.reports': (payload) => reporter.add(payload),
    'device.reports.v2': async ({ receivedAt, devices }) => {
      const moved = await Promise.all(devices.map(({ deviceId, reports }) => reporter.add({ deviceId, receivedAt, reports })));
      return moved.reduce((sum, n) => sum + n, 0);
    },
  };
}
