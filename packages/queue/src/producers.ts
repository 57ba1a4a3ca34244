import { Queue } from 'bullmq';
import type { RedisClient } from './topology.ts';
import { JOBS, QUEUES, parsePayload, type JobPayload } from './catalog.ts';

export type DispatchQueue = Queue;
export type ReportsQueue = Queue;
export type WebhooksQueue = Queue;

export function createDispatchQueue(connection: RedisClient, prefix: string): DispatchQueue {
  return new Queue(QUEUES.dispatch, { connection, prefix });
}

export function createReportsQueue(connection: RedisClient, prefix: string): ReportsQueue {
  return new Queue(QUEUES.reports, { connection, prefix });
}

/**
 * One `message.dispatch` job per message, in one round trip; the message id is the job id, so a
 * re-enqueue is a no-op. Scheduled messages (`at`, their send_at) get a job delayed until then.
 */
export async function enqueueDispatch(queue: DispatchQueue, messageIds: readonly string[], at?: Date | null): Promise<void> {
  const job = JOBS['message.dispatch'];
  const delay = at ? Math.max(0, at.getTime() - Date.now()) : 0;
  await queue.addBulk(
    messageIds.map((messageId) => ({
      name: 'message.dispatch',
      data: parsePayload('message.dispatch', { messageId }),
      opts: { ...job.options, jobId: messageId, ...(delay > 0 && { delay }) },
    })),
  );
}

export function createWebhooksQueue(connection: RedisClient, prefix: string): WebhooksQueue {
  return new Queue(QUEUES.webhooks, { connection, prefix });
}

/**
 * One `webhook.deliver` job per delivery, in one round trip, to run at once or at `at` (epoch ms);
 * the delivery id is the job id, so adding a delivery that has a job already is a no-op.
 */
export async function enqueueWebhookDeliveries(queue: WebhooksQueue, deliveries: readonly { id: string; webhookId: string }[], at?: number): Promise<void> {
  if (deliveries.length === 0) return;
  const job = JOBS['webhook.deliver'];
  const delay = at === undefined ? 0 : Math.max(0, at - Date.now());
  await queue.addBulk(
    deliveries.map(({ id, webhookId }) => ({
      name: 'webhook.deliver',
      data: parsePayload('webhook.deliver', { deliveryId: id, webhookId }),
      opts: { ...job.options, jobId: id, ...(delay > 0 && { delay }) },
    })),
  );
}

// The most reports of one job (the payload's limit).
const REPORTS_PER_JOB = 500;

/** A device's reports as jobs of up to 500 each, in order, in one round trip. */
export async function enqueueReports(queue: ReportsQueue, payload: JobPayload<'device.reports'>): Promise<void> {
  await enqueueReportBatches(queue, [payload]);
}

/**
 * The reports of many device requests in one round trip: those of one device are merged, in
 * order (each report keeps its request's arrival time as `at` when it has none of its own), and
 * all devices' go into `device.reports.v2` jobs of up to 500 reports, so that the dispatcher
 * takes one job where there were many requests of many devices.
 */
export async function enqueueReportBatches(queue: ReportsQueue, payloads: readonly JobPayload<'device.reports'>[]): Promise<void> {
  const byDevice = new Map<string, JobPayload<'device.reports'>['reports']>();
  for (const { deviceId, receivedAt, reports } of payloads) {
    let merged = byDevice.get(deviceId);
    if (!merged) byDevice.set(deviceId, (merged = []));
    for (const report of reports) merged.push(payloads.length === 1 || report.at !== undefined ? report : { ...report, at: receivedAt });
  }
  const receivedAt = payloads[0]?.receivedAt ?? new Date().toISOString();
  const jobs: JobPayload<'device.reports.v2'>[] = [];
  let job: JobPayload<'device.reports.v2'> = { receivedAt, devices: [] };
  let room = REPORTS_PER_JOB;
  for (const [deviceId, reports] of byDevice) {
    for (let i = 0; i < reports.length; ) {
      if (room === 0) {
        jobs.push(job);
        job = { receivedAt, devices: [] };
        room = REPORTS_PER_JOB;
      }
      const part = reports.slice(i, i + room);
      job.devices.push({ deviceId, reports: part });
      room -= part.length;
      i += part.length;
    }
  }
  if (job.devices.length > 0) jobs.push(job);
  const options = JOBS['device.reports.v2'].options;
  await queue.addBulk(jobs.map((data) => ({ name: 'device.reports.v2', data: parsePayload('device.reports.v2', data), opts: options })));
}

/** The devices' reports that a report job carries, one entry per device, whichever version of the job. */
export function reportsOfJob(job: { name: string; data: unknown }): JobPayload<'device.reports'>[] {
  if (job.name === 'device.reports.v2') {
    const { receivedAt, devices } = parsePayload('device.reports.v2', job.data);
    return devices.map(({ deviceId, reports }) => ({ deviceId, receivedAt, reports }));
  }
  return [parsePayload('device.reports', job.data)];
}
