import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, isUuid, readInstant } from '@smsgw/core';
import { announceTransitions, findDevice, resendReceived } from '@smsgw/db';
import { announceDeps } from '../../../services/send-deps.ts';
import { smsGateErrors } from './schemas.ts';

/** At most this many received SMS per refresh: a wider window is refused, to be asked again in parts. */
export const MAX_REFRESHED = 1000;

const Timestamp = Type.String({ format: 'date-time' });

/** SMS Gate's `InboxRefreshRequest` (client-go `smsgateway`, with `webhookDelivery` of server 1.34). */
const InboxRefreshRequest = Type.Object(
  {
    deviceId: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "Only this device's SMS; absent: every device's." })),
    since: Timestamp,
    until: Timestamp,
    messageTypes: Type.Optional(
      Type.Union([
        Type.Array(Type.Union([Type.Literal('SMS'), Type.Literal('MMS')]), { description: 'smsgw stores SMS only: without SMS nothing is sent.' }),
        Type.Null(),
      ]),
    ),
    triggerWebhooks: Type.Optional(Type.Union([Type.Boolean({ description: 'Deprecated: true is webhookDelivery Individual.' }), Type.Null()])),
    webhookDelivery: Type.Optional(
      Type.Union([
        Type.Union([Type.Literal('Disabled'), Type.Literal('Individual'), Type.Literal('Batch')], {
          description: 'Batch is delivered as Individual (smsgw has no batch events).',
        }),
        Type.Null(),
      ]),
    ),
  },
  { examples: [{ since: '2026-01-01T00:00:00Z', until: '2026-01-01T23:59:59Z', webhookDelivery: 'Individual' }] },
);

/**
 * `POST /inbox/refresh`: upstream asks the phones to hand their received SMS of a window to the
 * webhooks again; smsgw has them already, so it writes an `sms:received` delivery for each to the
 * user's SMS Gate `sms:received` webhooks, in one statement, for the engine to deliver. As upstream,
 * nothing is sent unless `webhookDelivery` (or the older `triggerWebhooks`) asks for it.
 */
const inboxRefreshRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/refresh',
    {
      schema: {
        tags: ['sms-gate-client'],
        summary: `Send the received SMS of a window (at most ${MAX_REFRESHED}) to your sms:received webhooks again: 202`,
        body: InboxRefreshRequest,
        response: { 202: Type.String({ description: "`Accepted`, as upstream's server answers." }), ...smsGateErrors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const { since, until, messageTypes, triggerWebhooks, webhookDelivery } = request.body;
      const from = readInstant(since)!;
      const to = readInstant(until)!;
      if (from > to) throw new AppError('invalid_request', 'since must be before or equal to until');
      const deviceId = request.body.deviceId || null;
      if (deviceId !== null && !(isUuid(deviceId) && (await findDevice(app.sql, { userId, id: deviceId.toLowerCase() })))) {
        throw new AppError('invalid_request', `invalid "deviceId" = "${deviceId}": device not found`);
      }
      const delivery = webhookDelivery ?? (triggerWebhooks ? 'Individual' : 'Disabled');
      const wanted = messageTypes == null || messageTypes.length === 0 || messageTypes.includes('SMS');
      if (delivery === 'Disabled' || !wanted) return accepted(reply);

      const { count, deliveries } = await resendReceived(app.sql, {
        userId,
        deviceId: deviceId?.toLowerCase() ?? null,
        since: from,
        until: to,
        cap: MAX_REFRESHED,
        now: new Date(),
      });
      if (count > MAX_REFRESHED) {
        throw new AppError('invalid_request', `the window holds more than ${MAX_REFRESHED} received messages: refresh a narrower one`);
      }
      await announceTransitions(announceDeps(app), { deliveries });
      return accepted(reply);
    },
  );
};
export default inboxRefreshRoutes;

/** Upstream's answer: its framework's `SendStatus(202)`, the status text as a plain-text body. */
const accepted = (reply: FastifyReply) => reply.status(202).type('text/plain; charset=utf-8').send('Accepted');
