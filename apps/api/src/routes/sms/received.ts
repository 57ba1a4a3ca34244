import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, ReceivedRecordSchema, isUuid, toReceivedRecord } from '@smsgw/core';
import { findReceived, listReceived } from '@smsgw/db';
import { ErrorBody, IdParams, PageOf, Pagination, authErrors, page } from '../../schemas/common.ts';

const ReceivedQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'Exact sender, as the device saw it (write `+` as `%2B`).' })),
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'The device that received it.' })),
  ...Pagination.properties,
});

/**
 * Incoming SMS of the user (real-devices.md §4). Its static paths win over `/api/v1/sms/:id`
 * (find-my-way matches static segments before parameters), so `received` is never read as an id.
 */
const receivedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/api/v1/sms/received',
    {
      schema: {
        tags: ['sms'],
        summary: 'List incoming SMS, newest first',
        querystring: ReceivedQuery,
        response: { 200: PageOf(ReceivedRecordSchema), 400: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const { from, device_id, limit, offset } = request.query;
      const { rows, total } = await listReceived(app.db, { userId: request.auth.user.id, from, deviceId: device_id, limit, offset });
      return page(rows.map(toReceivedRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/sms/received/:id',
    { schema: { tags: ['sms'], summary: 'Get one incoming SMS', params: IdParams, response: { 200: ReceivedRecordSchema, 404: ErrorBody, ...authErrors } } },
    async (request) => {
      const { id } = request.params;
      const received = isUuid(id) ? await findReceived(app.db, { userId: request.auth.user.id, id }) : null;
      if (!received) throw new AppError('not_found', 'Message not found');
      return toReceivedRecord(received);
    },
  );
};
export default receivedRoutes;
