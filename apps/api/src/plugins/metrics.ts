import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HEALTH_STATUSES } from '@smsgw/core';
import { devicesByHealth } from '@smsgw/db';

export interface ApiMetrics {
  registry: Registry;
  messagesAccepted: Counter<'endpoint'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ApiMetrics;
  }
}

/**
 * Prometheus metrics at `GET /metrics`: process metrics, request durations by route and status,
 * messages accepted, and devices by health. A registry per app instance, so that several apps in one process (tests)
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
    // Read from Postgres at each scrape: every API instance answers the same, whichever is scraped
    // (a dispatcher would only know what its own sweeps saw). The status is the alerts' (health_status).
    new Gauge({
      name: 'smsgw_devices',
      help: 'Enabled devices by the health status last announced for them (device.* webhook events).',
      labelNames: ['health'] as const,
      registers: [registry],
      async collect() {
        const counts = await devicesByHealth(app.sql);
        for (const status of HEALTH_STATUSES) this.set({ health: status }, counts[status]);
      },
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
