import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { offerValidUntil } from '@smsgw/core';
import type { OfferedMessage } from '@smsgw/db';
import { ErrorBody } from '../../../schemas/common.ts';
import { confirmPhoneCancels } from '../../../services/cancel-messages.ts';
import { acceptReports, offer } from '../../../services/device-core.ts';
import type { MobileContext } from './context.ts';
import { phoneAuthentication } from './phone-auth.ts';
import { cancelledId, reportsOfSnapshot } from './snapshots.ts';
import { MobileMessage, phoneErrors, PullQuery, SnapshotsBody } from './wire.ts';

const tags = ['sms-gate'];

/** The most messages one pull returns (the app's own server's page). */
const PULL_LIMIT = 100;

/**
 * The phone's messages (real-devices.md §2): a pull is an offer, not a claim, answered at once;
 * the phone's first snapshot of a message is its acknowledgement.
 */
const messageRoutes: FastifyPluginAsyncTypebox<MobileContext> = async (app, { moreWaiting, offered, streams }) => {
  app.addHook('onRequest', phoneAuthentication(app, { recordVersion: true, streams }));
  const { config } = app;

  const item = (m: OfferedMessage): MobileMessage => ({
    id: m.id,
    textMessage: { text: m.body },
    message: m.body,
    phoneNumbers: [m.to],
    ...(m.simNumber !== null && { simNumber: m.simNumber }),
    withDeliveryReport: m.withDeliveryReport,
    // An encrypted message's text and number are the client's ciphertexts, unchanged: the phone decrypts them.
    isEncrypted: m.encrypted,
    ...(m.priority !== 0 && { priority: m.priority }),
    validUntil: offerValidUntil(m, config).toISOString(),
    createdAt: m.createdAt.toISOString(),
    state: 'Pending',
  });

  app.get(
    '/message',
    {
      schema: {
        tags,
        summary: 'The phone’s messages not yet acknowledged, returned again on every pull until its first snapshot of each (at most 100)',
        querystring: PullQuery,
        response: { 200: Type.Array(MobileMessage), ...phoneErrors },
      },
    },
    async (request) => {
      const order = request.query.order === 'fifo' ? 'oldest' : 'newest';
      const messages = await offer(app, request.device, { limit: PULL_LIMIT, order });
      offered.remember(
        request.device.id,
        messages.map((m) => m.id),
      );
      return messages.map(item);
    },
  );

  app.patch(
    '/message',
    {
      schema: {
        tags,
        summary: 'State snapshots of the phone’s messages, each applied on its own; a late or repeated one never moves a message back',
        body: SnapshotsBody,
        response: { 204: Type.Null(), 400: ErrorBody, 413: ErrorBody, 415: ErrorBody, 503: ErrorBody, ...phoneErrors },
      },
    },
    async (request, reply) => {
      const receivedAt = new Date();
      // `Cancelled` of a message the phone was asked to cancel ends it as cancelled; any other is a report.
      const cancelled = await confirmPhoneCancels(app, request.device, request.body.flatMap(cancelledId));
      const reports = request.body.flatMap((element) => reportsOfSnapshot(element, receivedAt)).filter((r) => !cancelled.has(r.id.toLowerCase()));
      if (reports.length > 0) {
        const { rejected } = await acceptReports(app, request.device, reports, offered);
        if (rejected.length > 0) request.log.info({ ids: rejected.slice(0, 10).map((r) => r.id) }, 'snapshots of messages not of this phone ignored');
        moreWaiting.acknowledged(request.device.id);
      }
      return reply.status(204).send(null);
    },
  );
};
export default messageRoutes;
