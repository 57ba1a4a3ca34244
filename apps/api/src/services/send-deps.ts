import type { FastifyInstance } from 'fastify';
import { assignDevices } from '@smsgw/assign';
import type { AnnounceDeps, SendDeps } from '@smsgw/db';
import { enqueueDispatch, enqueueWebhookDeliveries, publishUserEvents, usersListening } from '@smsgw/queue';

/** What announcing a commit (`announceTransitions`) needs of the API process: its queue, Redis and incident log. */
export function announceDeps(app: FastifyInstance): AnnounceDeps {
  return {
    sql: app.sql,
    incidents: app.incidents,
    enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(app.webhooksQueue, deliveries),
    publishUserEvents: (events) => publishUserEvents(app.redis, app.config.QUEUE_PREFIX, events),
    usersListening: () => usersListening(app.redis, app.config.QUEUE_PREFIX),
  };
}

// The most messages of a send assigned in one plan and compare-and-set (the dispatcher's DISPATCH_BATCH_SIZE plays this part there).
const ASSIGN_BATCH = 1000;

/** What smsgw's one send function needs of the API process: every send route (own or a peer's) passes this. */
export function sendDeps(app: FastifyInstance): SendDeps {
  return {
    ...announceDeps(app),
    config: app.config,
    enqueueDispatch: (ids, at) => {
      // The rate limit's deferred counts ride the enqueue's round trip, on its connection.
      app.rateCounts.flush(app.redis);
      return enqueueDispatch(app.dispatchQueue, ids, at);
    },
    inBackground: (work) => app.background.add(work),
    assignNow: async (ids) => {
      if (app.config.SEND_ASSIGN_MIN_RECIPIENTS === 0 || ids.length < app.config.SEND_ASSIGN_MIN_RECIPIENTS) return ids;
      // Also when no dispatch job follows: the deferred counts go out before the wake-ups, on the same connection.
      app.rateCounts.flush(app.redis);
      const deps = { sql: app.sql, redis: app.redis, announce: announceDeps(app), config: app.config, log: app.log };
      const left: string[] = [];
      for (let i = 0; i < ids.length; i += ASSIGN_BATCH) {
        const batch = ids.slice(i, i + ASSIGN_BATCH);
        const outcomes = await assignDevices(deps, batch);
        // Assigned, failed at once, or moved by another process (cancelled): no job. Waits and no device: the job's.
        left.push(...batch.filter((_, j) => outcomes[j] === 'no_device' || typeof outcomes[j] === 'object'));
      }
      return left;
    },
  };
}
