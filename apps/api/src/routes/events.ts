import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, MessageStatusEventSchema, ReceivedRecordSchema } from '@smsgw/core';
import type { UserEvent } from '@smsgw/queue';
import { authErrors } from '../schemas/common.ts';
import { openEventStream } from '../services/event-stream.ts';

/** Streams one user may hold on one API process; beyond that the user is answered 429. */
export const MAX_STREAMS_PER_USER = 10;
// A client that reads this far behind is cut off (it reconnects and re-reads) rather than buffered without end.
const MAX_BUFFERED_BYTES = 1024 * 1024;

const DESCRIPTION = `Server-sent events of the caller's messages and received SMS, for as long as the connection is open.
Credentials go in a header (\`Authorization: Bearer\` with an API key or a JWT, or \`X-API-Key\`), so browsers read it with
\`fetch\` rather than \`EventSource\`. Events:

- \`message.status\`: a message of the caller moved to a new state (including \`queued\` when it is accepted); \`data\` is
  \`MessageStatusEvent\` (id, status, state, batch_id, device_id, error and timestamps).
- \`sms.received\`: a device of the caller received an SMS; \`data\` is the received record of \`GET /api/v1/sms/received/{id}\`.

A comment line (\`: keepalive\`) every DEVICE_HEARTBEAT_SECONDS (15). The API ends a stream after JWT_TTL_SECONDS
(900), so that a revoked key or an expired JWT stops receiving: reconnect with valid credentials. Events are hints, sent at most once: one may be lost
(Redis restarting, a reconnect), so a client re-reads the list it shows whenever the stream (re)opens. At most
${MAX_STREAMS_PER_USER} streams per user and API process (429 beyond). The API ends every stream when it shuts down.`;

/** The wire form of one event. */
export function eventFrame(event: UserEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** `GET /api/v1/events`: the user's live events (see DESCRIPTION). */
const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/events',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['sms'],
        summary: 'Server-sent events: message status changes and received SMS',
        description: DESCRIPTION,
        response: {
          200: {
            description: 'The stream: `message.status` events (data: MessageStatusEvent) and `sms.received` events (data: the received record).',
            content: {
              'text/event-stream': {
                // What the publishers send, field for field: both come from @smsgw/core (message-record.ts, received-record.ts).
                schema: Type.String({ 'x-event-data': { 'message.status': MessageStatusEventSchema, 'sms.received': ReceivedRecordSchema } }),
              },
            },
          },
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const hub = app.userEvents;
      if (hub.count(userId) >= MAX_STREAMS_PER_USER) {
        throw new AppError('rate_limited', `Too many event streams open: at most ${MAX_STREAMS_PER_USER} per user; close one first.`);
      }
      const res = reply.raw;
      let open = false;
      let closed = false;
      let keepalive: NodeJS.Timeout | undefined;
      let lifetime: NodeJS.Timeout | undefined;
      let unregister = () => {};
      const pending: UserEvent[][] = [];
      const listening = hub.listen(userId, (events) => {
        if (!open) return void pending.push(events);
        if (res.writableLength > MAX_BUFFERED_BYTES) return close();
        res.write(events.map(eventFrame).join(''));
      });
      function close() {
        if (closed) return;
        closed = true;
        clearInterval(keepalive);
        clearTimeout(lifetime);
        listening.stop();
        unregister();
        if (open) res.end();
      }
      // The client may leave while the subscription is on its way.
      res.on('close', close);
      try {
        // The stream opens once the user's channel is heard, so a client that re-reads on ': connected' misses nothing.
        await listening.subscribed;
      } catch (error) {
        close();
        throw error;
      }
      if (closed) return reply.hijack();
      openEventStream(reply);
      open = true;
      res.write(`: connected\n\n${pending.flat().map(eventFrame).join('')}`);
      // A comment as often as on device streams keeps proxies from closing an idle stream.
      keepalive = setInterval(() => res.write(': keepalive\n\n'), app.config.DEVICE_HEARTBEAT_SECONDS * 1000);
      // The credentials were checked once, when the stream opened: it lasts no longer than a JWT.
      lifetime = setTimeout(() => close(), app.config.JWT_TTL_SECONDS * 1000);
      unregister = hub.onClose(close);
    },
  );
};
export default eventRoutes;
