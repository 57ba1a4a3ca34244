import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid } from '@smsgw/core';
import { claimMessages, markDeviceSeen, messagesOfDevice } from '@smsgw/db';
import { DeviceReport, enqueueReports } from '@smsgw/queue';
import { ErrorBody } from '../../schemas/common.ts';

const deviceErrors = { 401: ErrorBody, 429: ErrorBody };

const ClaimQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  wait: Type.Integer({ minimum: 0, maximum: 60, default: 0, description: 'Seconds to wait for a message when there is none.' }),
});
const ClaimedMessage = Type.Object({
  id: Type.String(),
  to: Type.String(),
  message: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
const ReportsBody = Type.Object(
  { reports: Type.Array(DeviceReport, { minItems: 1, maxItems: 500 }) },
  { additionalProperties: false },
);
const ReportsResponse = Type.Object({
  accepted: Type.Integer(),
  rejected: Type.Array(Type.Object({ id: Type.String(), error: Type.String(), message: Type.String() })),
});

/**
 * The device protocol (decisions.md, "Devices"), authenticated by the device token: an event
 * stream of wake-ups, an atomic claim that can long-poll, batched reports, and a heartbeat.
 */
const deviceProtocolRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticateDevice);
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of streams) close();
  });

  app.get(
    '/api/v1/device/events',
    {
      schema: {
        tags: ['device'],
        summary: 'Server-sent events: `wakeup` when messages are assigned, heartbeat comments in between',
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...deviceErrors },
      },
    },
    (request, reply) => {
      const { device } = request;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const wakeup = () => res.write('event: wakeup\ndata: {}\n\n');
      // A wake-up at once, so that a device that reconnects claims what was assigned meanwhile.
      wakeup();
      const stopListening = app.wakeups.listen(device.id, wakeup);
      const heartbeat = setInterval(() => {
        res.write(': heartbeat\n\n');
        markDeviceSeen(app.sql, device, new Date()).catch((error: unknown) => request.log.warn({ err: error }, 'mark seen failed'));
      }, app.config.DEVICE_HEARTBEAT_SECONDS * 1000);
      const close = () => {
        if (!streams.delete(close)) return;
        clearInterval(heartbeat);
        stopListening();
        res.end();
      };
      streams.add(close);
      res.on('close', close);
    },
  );

  app.get(
    '/api/v1/device/messages',
    {
      schema: {
        tags: ['device'],
        summary: 'Claim assigned messages (moves them to sending); waits up to `wait` seconds when there is none',
        querystring: ClaimQuery,
        response: { 200: Type.Object({ messages: Type.Array(ClaimedMessage) }), 400: ErrorBody, ...deviceErrors },
      },
    },
    async (request, reply) => {
      const { device } = request;
      const { limit, wait } = request.query;
      const gone = new AbortController();
      reply.raw.on('close', () => gone.abort());
      // Listen before looking, so that a wake-up between the look and the wait is not missed.
      const waiter = wait > 0 ? app.wakeups.waiter(device.id) : undefined;
      const deadline = Date.now() + wait * 1000;
      try {
        for (;;) {
          // A client that left gets nothing claimed: a claimed message is never handed out again.
          if (gone.signal.aborted || !device.enabled) return { messages: [] };
          const claimed = await claimMessages(app.sql, { deviceId: device.id, limit, now: new Date() });
          if (claimed.length > 0 || !waiter || Date.now() >= deadline) {
            return {
              messages: claimed.map((m) => ({ id: m.id, to: m.to, message: m.body, created_at: m.createdAt.toISOString() })),
            };
          }
          await waiter.wait(deadline - Date.now(), gone.signal);
        }
      } finally {
        waiter?.cancel();
      }
    },
  );

  app.post(
    '/api/v1/device/reports',
    {
      schema: {
        tags: ['device'],
        summary: 'Report sent, delivered or failed for the device’s messages (idempotent)',
        body: ReportsBody,
        response: { 202: ReportsResponse, 400: ErrorBody, 503: ErrorBody, ...deviceErrors },
      },
    },
    async (request, reply) => {
      const { device } = request;
      const { reports } = request.body;
      const wellFormed = reports.filter((r) => isUuid(r.id)).map((r) => r.id.toLowerCase());
      const own = await messagesOfDevice(app.sql, { deviceId: device.id, ids: [...new Set(wellFormed)] });
      const accepted = reports.filter((r) => own.has(r.id.toLowerCase())).map((r) => ({ ...r, id: r.id.toLowerCase() }));
      const rejected = reports
        .filter((r) => !own.has(r.id.toLowerCase()))
        .map((r) => ({ id: r.id, error: 'not_found', message: 'No message of this device has this id.' }));
      if (accepted.length > 0) {
        try {
          await enqueueReports(app.reportsQueue, { deviceId: device.id, receivedAt: new Date().toISOString(), reports: accepted });
        } catch (error) {
          request.log.error({ err: error }, 'reports enqueue failed');
          throw new AppError('service_unavailable', 'Reports cannot be taken right now; send them again.');
        }
      }
      return reply.status(202).send({ accepted: accepted.length, rejected });
    },
  );

  app.post(
    '/api/v1/device/heartbeat',
    {
      schema: {
        tags: ['device'],
        summary: 'Tell the service the device is alive (it then counts as available)',
        response: { 200: Type.Object({ status: Type.Literal('ok'), server_time: Type.String({ format: 'date-time' }) }), ...deviceErrors },
      },
    },
    async () => ({ status: 'ok' as const, server_time: new Date().toISOString() }),
  );
};
export default deviceProtocolRoutes;
