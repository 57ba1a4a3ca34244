import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HEALTH_REASONS, HEALTH_STATUSES } from '@smsgw/core';
import { devicesByHealth, devicesByHealthReason } from '@smsgw/db';
import { CHECK_TIMEOUT_MS, checkStores, STORES, within } from '../services/store-checks.ts';

export interface ApiMetrics {
  registry: Registry;
  messagesAccepted: Counter<'endpoint'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ApiMetrics;
  }
}

/** The queues an API process adds jobs to, and the job states `smsgw_queue_jobs` counts. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
const queuesOf = (app: FastifyInstance) => ({ dispatch: app.dispatchQueue, reports: app.reportsQueue, webhooks: app.webhooksQueue });

/**
 * Prometheus metrics at `GET /metrics`: process metrics, request durations by route and status,
 * messages accepted, and what the shared stores hold (devices by health and by reason, queued jobs)
 * with whether they answer. A registry per app instance, so that several apps in one process (tests)
 * never share counters.
 */
export const metrics = fp(
  async (app: FastifyInstance) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Histogram({
      name: 'smsgw_http_request_duration_seconds',
      help: 'HTTP requests by method, route and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    const messagesAccepted = new Counter({
      name: 'smsgw_messages_accepted_total',
      help: 'Messages accepted by the send endpoints (one per recipient).',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
    new Gauge({
      name: 'smsgw_store_up',
      help: 'Whether the store answered this process within a second (1) or not (0), as GET /ready checks.',
      labelNames: ['store'] as const,
      registers: [registry],
      async collect() {
        const up = await checkStores(app, (store, error) => app.incidents.report(`metrics: ${store} did not answer`, error));
        for (const store of STORES) this.set({ store }, up[store] ? 1 : 0);
      },
    });
    // The gauges below are read from Postgres or Redis at each scrape: every API instance answers
    // the same, whichever is scraped (a dispatcher would only know what its own jobs saw). A store
    // that does not answer leaves them out of the scrape, which still answers with smsgw_store_up.
    const fromStore = <L extends string>(name: string, help: string, labelNames: readonly L[], read: (gauge: Gauge<L>) => Promise<void>) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          await within(read(this), CHECK_TIMEOUT_MS).catch((error: unknown) => {
            this.reset();
            app.incidents.report(`metrics: ${name} not read`, error);
          });
        },
      });
    // The status is the alerts' (health_status).
    fromStore('smsgw_devices', 'Enabled devices by the health status last announced for them (device.* webhook events).', ['health'], async (gauge) => {
      const counts = await devicesByHealth(app.sql);
      for (const health of HEALTH_STATUSES) gauge.set({ health }, counts[health]);
    });
    fromStore('smsgw_device_health_reasons', 'Enabled devices whose last announced health names this reason.', ['reason'], async (gauge) => {
      const counts = await devicesByHealthReason(app.sql);
      for (const reason of HEALTH_REASONS) gauge.set({ reason }, counts[reason]);
    });
    fromStore('smsgw_queue_jobs', 'Jobs in the queues that all processes share, by queue and state.', ['queue', 'state'], async (gauge) => {
      const queues = Object.entries(queuesOf(app));
      const counts = await Promise.all(queues.map(([, queue]) => queue.getJobCounts(...QUEUE_STATES)));
      for (const [i, [queue]] of queues.entries()) for (const state of QUEUE_STATES) gauge.set({ queue, state }, counts[i]![state] ?? 0);
    });
    app.decorate('metrics', { registry, messagesAccepted });

    app.addHook('onResponse', async (request, reply) => {
      // Unmatched routes are one label, so that scanning for URLs cannot grow the label set.
      const route = request.routeOptions.url ?? 'unmatched';
      requests.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics' },
);
