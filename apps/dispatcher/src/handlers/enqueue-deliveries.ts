import type { Logger } from 'pino';
import type { DeliveryRef } from '@smsgw/db/sql';
import { enqueueWebhookDeliveries, type WebhooksQueue } from '@smsgw/queue';

/**
 * Enqueues the webhook deliveries a committed transition wrote. A failure is only logged: the
 * deliveries are in Postgres, and the sweep enqueues every pending delivery that is overdue.
 */
export async function enqueueDeliveries(queue: WebhooksQueue, log: Logger, deliveries: DeliveryRef[]): Promise<void> {
  if (deliveries.length === 0) return;
  try {
    await enqueueWebhookDeliveries(queue, deliveries);
  } catch (error) {
    log.warn({ err: error, count: deliveries.length }, 'enqueue of webhook deliveries failed; left to the outbox sweep');
  }
}
