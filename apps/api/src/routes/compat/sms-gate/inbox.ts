import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, isUuid, readInstant, type ReceivedFields } from '@smsgw/core';
import { listReceived } from '@smsgw/db';
import { InboxQuery, IncomingMessage, smsGateErrors } from './schemas.ts';

const tags = ['sms-gate-client'];

/**
 * `GET /inbox`: the SMS the user's devices received, as SMS Gate's `IncomingMessage` (upstream
 * answers 501; smsgw has them, read by the same statement as `GET /api/v1/sms/received`). Newest
 * first, `from`/`to` on their arrival at smsgw, the total in `X-Total-Count` (counted up to
 * 10,000). smsgw receives SMS only: another valid `type` lists nothing.
 */
const inboxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      schema: {
        tags,
        summary: 'List received SMS, newest first, the total in X-Total-Count',
        querystring: InboxQuery,
        response: { 200: Type.Array(IncomingMessage), ...smsGateErrors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { type, limit, offset, from, to, deviceId } = request.query;
      if (deviceId !== undefined && !isUuid(deviceId)) throw new AppError('invalid_request', 'deviceId: not a device id');
      if (type !== undefined && type !== 'SMS') return reply.header('x-total-count', '0').send([]);
      const page = await listReceived(app.listingSql, {
        userId: request.auth.user.id,
        ...(deviceId !== undefined && { deviceId }),
        ...(from !== undefined && { since: readInstant(from)! }),
        ...(to !== undefined && { until: readInstant(to)! }),
        limit,
        offset,
      });
      return reply.header('x-total-count', String(page.total)).send(page.rows.map(toIncomingMessage));
    },
  );
};
export default inboxRoutes;

function toIncomingMessage(r: ReceivedFields) {
  return {
    id: r.id,
    type: 'SMS' as const,
    sender: r.from,
    ...(r.to !== null && { recipient: r.to }),
    ...(r.simNumber !== null && { simNumber: r.simNumber }),
    contentPreview: r.body,
    createdAt: r.receivedAt.toISOString(),
  };
}
