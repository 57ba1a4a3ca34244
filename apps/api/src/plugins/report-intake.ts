import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Batcher } from '@smsgw/core';
import { enqueueReportBatches, parsePayload, type JobPayload } from '@smsgw/queue';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Queues a device request's reports; resolves once Redis holds them (with other requests', in one
     * round trip) and, on a cluster or behind Sentinel, a replica too (REDIS_WAIT_REPLICAS); else rejects.
     */
    queueReports: (payload: JobPayload<'device.reports'>) => Promise<void>;
  }
}

// The most device requests whose reports share one enqueue.
const REQUESTS_PER_ENQUEUE = 256;

/**
 * The device requests' reports of this API process, coalesced: the requests that arrive while an
 * enqueue is in flight share the next one (one Redis round trip, one job per device), and each is
 * answered only when that enqueue succeeded, so a 2xx still means its reports are in Redis (and in
 * REDIS_WAIT_REPLICAS replicas, so that a failover of the primary loses none). When idle a request
 * waits for nothing but the end of its event-loop turn (docs/decisions.md, "Device reports are
 * coalesced").
 */
export const reportIntake = fp(
  async (app: FastifyInstance) => {
    const batcher = new Batcher<JobPayload<'device.reports'>, void>(async (payloads) => {
      await enqueueReportBatches(app.reportsQueue, payloads);
      await app.reportsSaved();
      return payloads.map(() => undefined);
    }, REQUESTS_PER_ENQUEUE);
    // Checked alone first: a payload the job refuses fails its own request, not the others of its enqueue.
    app.decorate('queueReports', (payload: JobPayload<'device.reports'>) => batcher.add(parsePayload('device.reports', payload)));
  },
  { name: 'report-intake', dependencies: ['resources'] },
);
