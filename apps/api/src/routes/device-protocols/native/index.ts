import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, NETWORK_STATES, networkState, offerValidUntil, withoutLeapSecond } from '@smsgw/core';
import { DeviceReport } from '@smsgw/queue';
import { ErrorBody } from '../../../schemas/common.ts';
import { acceptReports, offer, receiveInbound } from '../../../services/device-core.ts';
import { EventStreams } from '../../../services/event-stream.ts';

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
  valid_until: Type.String({ format: 'date-time', description: 'Send it before this moment or not at all; smsgw fails it after.' }),
  sim_number: Type.Union([Type.Integer({ minimum: 1, maximum: 3 }), Type.Null()], {
    description: 'The SIM slot to send from (1-3); null: the device’s default. A device that cannot use this slot reports the message failed.',
  }),
});
const ReportsBody = Type.Object(
  { reports: Type.Array(DeviceReport, { minItems: 1, maxItems: 500 }) },
  { additionalProperties: false, examples: [{ reports: [{ id: '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10', status: 'sent', at: '2026-03-01T09:30:01.532Z' }] }] },
);
const ReportsResponse = Type.Object({
  accepted: Type.Integer(),
  rejected: Type.Array(Type.Object({ id: Type.String(), error: Type.String(), message: Type.String() })),
});
const InboundBody = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        {
          id: Type.Optional(
            Type.String({ minLength: 1, maxLength: 128, description: 'The device’s own id of the SMS: a repeat with the same id is stored once.' }),
          ),
          from: Type.String({ minLength: 1, maxLength: 64, description: 'Sender as the device saw it.' }),
          to: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The receiving SIM’s number.' })),
          message: Type.String({ maxLength: 10000 }),
          received_at: Type.String({ format: 'date-time' }),
          sim_number: Type.Optional(Type.Integer({ minimum: 1, maximum: 8 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
  },
  {
    additionalProperties: false,
    examples: [{ messages: [{ id: 'sms-1', from: '+15557654321', message: 'STOP', received_at: '2026-03-01T10:02:11.000Z', sim_number: 1 }] }],
  },
);

/**
 * What a device may tell of itself in a heartbeat (docs/devices.md, "Health"); each field optional,
 * null: it does not know. The network is a label of the device's own words: one smsgw does not know
 * is stored as unknown rather than costing the heartbeat its other readings (decisions.md).
 */
const HeartbeatBody = Type.Object(
  {
    battery_level: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100, description: 'Battery charge in percent.' }), Type.Null()])),
    charging: Type.Optional(Type.Union([Type.Boolean({ description: 'Whether the battery is charging (or on mains power).' }), Type.Null()])),
    signal_dbm: Type.Optional(Type.Union([Type.Integer({ minimum: -150, maximum: 0, description: 'Mobile signal strength in dBm.' }), Type.Null()])),
    network: Type.Optional(
      Type.Union([
        Type.String({
          description: `Registration on the mobile network: ${NETWORK_STATES.map((n) => `\`${n}\``).join(', ')}; \`none\`, \`searching\`, \`denied\` and \`no_sim\` mean no service. Any other label is accepted and stored as unknown (null).`,
          examples: ['registered'],
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false, examples: [{ battery_level: 87, charging: true, signal_dbm: -71, network: 'registered' }] },
);

/**
 * The native device protocol (docs/devices.md), authenticated by the device token: an event
 * stream of wake-ups, a claim that offers the device its messages (again, until it reports about
 * them) and can long-poll, batched reports, incoming SMS and a heartbeat.
 */
const nativeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticateDevice);
  const streams = new EventStreams(app);
  app.addHook('preClose', async () => streams.closeAll());
  const { config } = app;

  app.get(
    '/api/v1/device/events',
    {
      schema: {
        tags: ['device'],
        summary: 'Server-sent events: `wakeup` when messages are assigned, heartbeat comments in between',
        // The stream as its media type; the errors before it opens are JSON like every other.
        response: { 200: { description: 'The event stream.', content: { 'text/event-stream': { schema: Type.String() } } }, ...deviceErrors },
      },
    },
    (request, reply) => {
      if (!streams.hasRoom(request.device.id)) throw new AppError('rate_limited', 'Too many event streams open for this device.');
      // A wake-up at once, so that a device that reconnects claims what was assigned meanwhile.
      streams.serve(request, reply, request.device, {
        greeting: [],
        wakeup: 'event: wakeup\ndata: {}\n\n',
        minWakeupIntervalMs: 0,
        keepalive: ': heartbeat\n\n',
        keepaliveMs: config.DEVICE_HEARTBEAT_SECONDS * 1000,
      });
    },
  );

  app.get(
    '/api/v1/device/messages',
    {
      schema: {
        tags: ['device'],
        summary:
          'Claim the device’s messages: returned again on every claim until the device reports about them; waits up to `wait` seconds when there is none',
        querystring: ClaimQuery,
        response: { 200: Type.Object({ messages: Type.Array(ClaimedMessage) }), 400: ErrorBody, ...deviceErrors },
      },
    },
    async (request) => {
      const { device } = request;
      const { limit, wait } = request.query;
      const gone = new AbortController();
      request.raw.on('close', () => gone.abort());
      // Listen before looking, so that a wake-up between the look and the wait is not missed.
      const waiter = wait > 0 ? app.wakeups.waiter(device.id) : undefined;
      const deadline = Date.now() + wait * 1000;
      try {
        for (;;) {
          const offered = await offer(app, device, { limit, order: 'fresh-first' });
          if (offered.length > 0 || !waiter || gone.signal.aborted || app.wakeups.closed || Date.now() >= deadline) {
            return {
              messages: offered.map((m) => ({
                id: m.id,
                to: m.to,
                message: m.body,
                created_at: m.createdAt.toISOString(),
                valid_until: validUntil(m).toISOString(),
                sim_number: m.simNumber,
              })),
            };
          }
          await waiter.wait(deadline - Date.now(), gone.signal);
        }
      } finally {
        waiter?.cancel();
      }
    },
  );
  const validUntil = (m: Parameters<typeof offerValidUntil>[0]) => offerValidUntil(m, config);

  app.post(
    '/api/v1/device/reports',
    {
      schema: {
        tags: ['device'],
        summary: 'Report sending (the acknowledgement), sent, delivered or failed for the device’s messages (idempotent)',
        body: ReportsBody,
        response: { 202: ReportsResponse, 400: ErrorBody, 503: ErrorBody, ...deviceErrors },
      },
    },
    async (request, reply) => reply.status(202).send(await acceptReports(app, request.device, request.body.reports)),
  );

  app.post(
    '/api/v1/device/inbound',
    {
      schema: {
        tags: ['device'],
        summary: 'Incoming SMS the device received (each stored once per `id`)',
        body: InboundBody,
        response: { 202: Type.Object({ stored: Type.Integer(), duplicates: Type.Integer() }), 400: ErrorBody, 503: ErrorBody, ...deviceErrors },
      },
    },
    async (request, reply) => {
      const messages = request.body.messages.map((m) => ({
        from: m.from,
        to: m.to ?? null,
        body: m.message,
        simNumber: m.sim_number ?? null,
        receivedAt: new Date(withoutLeapSecond(m.received_at)),
        dedupKey: m.id === undefined ? null : `id:${m.id}`,
      }));
      return reply.status(202).send(await receiveInbound(app, request.device, messages));
    },
  );

  app.post(
    '/api/v1/device/heartbeat',
    {
      // The body is optional: a heartbeat without one (every device before health) is an empty report.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['device'],
        summary:
          'Tell the service the device is alive (a device without an event stream then counts as available), with its battery and signal when it knows them',
        body: HeartbeatBody,
        response: { 200: Type.Object({ status: Type.Literal('ok'), server_time: Type.String({ format: 'date-time' }) }), 400: ErrorBody, ...deviceErrors },
      },
    },
    async (request) => {
      const now = new Date();
      const body = request.body;
      if (Object.keys(body).length > 0) {
        await app.recordHealth(request.device.id, {
          batteryLevel: body.battery_level,
          batteryCharging: body.charging,
          signalDbm: body.signal_dbm,
          network: body.network === undefined ? undefined : networkState(body.network),
        });
      }
      return { status: 'ok' as const, server_time: now.toISOString() };
    },
  );
};
export default nativeRoutes;
