import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid, toReceivedRecord } from '@smsgw/core';
import { findReceived, listReceived } from '@smsgw/db';
import { CursorPageOf, CursorPagination, IdParams, authErrors, cursorOf, cursorPage } from '../../schemas/common.ts';
import { errors } from '../../schemas/errors.ts';
import { ReceivedSms } from '../../schemas/records.ts';

const ReceivedQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'Exact sender, as the device saw it (write `+` as `%2B`).' })),
  device_id: Type.Optional(Type.String({ format: 'uuid', description: 'The device that received it.' })),
  ...CursorPagination.properties,
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
        response: { 200: CursorPageOf(ReceivedSms, 'ReceivedSmsPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { from, device_id, limit, offset } = request.query;
      const cursor = cursorOf(request.query);
      const result = await listReceived(app.listingSql, { userId: request.auth.user.id, from, deviceId: device_id, limit, offset, cursor });
      return cursorPage(result.rows.map(toReceivedRecord), result, request.query);
    },
  );

  app.get(
    '/api/v1/sms/received/:id',
    { schema: { tags: ['sms'], summary: 'Get one incoming SMS', params: IdParams, response: { 200: ReceivedSms, ...errors('not_found'), ...authErrors } } },
    async (request) => {
      const { id } = request.params;
      const received = isUuid(id) ? await findReceived(app.sql, { userId: request.auth.user.id, id }) : null;
      if (!received) throw new AppError('not_found', 'Message not found');
      return toReceivedRecord(received);
    },
  );
};
export default receivedRoutes;
