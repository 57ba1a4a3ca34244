import type { FastifyInstance } from 'fastify';
import type { SendDeps } from '@smsgw/db';
import { enqueueDispatch, enqueueWebhookDeliveries, publishUserEvents } from '@smsgw/queue';

/** What smsgw's one send function needs of the API process: every send route (own or a peer's) passes this. */
export function sendDeps(app: FastifyInstance): SendDeps {
  return {
    db: app.db,
    sql: app.sql,
    config: app.config,
    incidents: app.incidents,
    enqueueDispatch: (ids, at) => enqueueDispatch(app.dispatchQueue, ids, at),
    enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(app.webhooksQueue, deliveries),
    publishUserEvents: (events) => publishUserEvents(app.redis, app.config.QUEUE_PREFIX, events),
  };
}
