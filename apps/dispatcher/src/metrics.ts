import { createServer, type Server } from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MESSAGE_STATES } from '@smsgw/core';
import { TRY_OUTCOMES } from './webhooks/deliver-webhook.ts';

/** The dispatcher's Prometheus metrics, served on METRICS_PORT when it is set. */
export class DispatcherMetrics {
  readonly registry = new Registry();
  readonly jobs = new Counter({
    name: 'smsgw_dispatcher_jobs_total',
    help: 'Jobs handled, by job name and outcome.',
    labelNames: ['job_name', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly assignBatch = new Histogram({
    name: 'smsgw_dispatcher_assign_batch_size',
    help: 'Messages per assignment statement.',
    buckets: [1, 10, 50, 100, 250, 500, 1000, 5000],
    registers: [this.registry],
  });
  readonly transitions = new Counter({
    name: 'smsgw_message_transitions_total',
    help: 'Message state changes applied by the dispatcher, by new state.',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly deviceTransitions = new Counter({
    name: 'smsgw_device_message_transitions_total',
    help: "Message state changes that a device's reports caused, by device id and new state.",
    labelNames: ['device_id', 'state'] as const,
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'smsgw_webhook_attempts_total',
    help: 'Tries of webhook deliveries, by outcome: succeeded, retry (failed, tried again later), failed (for good), disabled, skipped (nothing to send).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // At 0 from the start, so that a rate sees the first change (a series that appears at 1 has none);
    // a dispatcher never cancels.
    for (const state of MESSAGE_STATES) if (state !== 'cancelled') this.transitions.inc({ state }, 0);
    for (const outcome of TRY_OUTCOMES) this.webhookAttempts.inc({ outcome }, 0);
  }

  /** Serves GET /metrics; resolves once listening, rejects when it cannot listen (port in use, say). */
  serve(host: string, port: number): Promise<Server> {
    const server = createServer((request, response) => {
      if (request.url !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }
}
