import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid, toMessageRecord } from '@smsgw/core';
import { findMessage, loadCancelTargets } from '@smsgw/db';
import { IdParams, authErrors } from '../../schemas/common.ts';
import { errors } from '../../schemas/errors.ts';
import { Message } from '../../schemas/records.ts';
import { cancelTargets } from '../../services/cancel-messages.ts';
import { BatchCancelled, BatchParams } from './schemas.ts';

/** Cancel (decisions.md, "Cancel"): one message, or every message of a batch. Registered inside the sms routes (authenticated). */
const cancelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/v1/sms/:id/cancel',
    {
      schema: {
        tags: ['sms'],
        summary: 'Cancel a message no device has sent yet: 200 cancelled; 202 when its SMS Gate phone (v1.67+) was asked to cancel it; 409 when it cannot be',
        params: IdParams,
        response: { 200: Message, 202: Message, ...errors('not_found', 'not_cancellable'), ...authErrors },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const { id } = request.params;
      const targets = isUuid(id) ? await loadCancelTargets(app.sql, { userId, ids: [id] }) : [];
      if (targets.length === 0) throw new AppError('not_found', 'Message not found');
      const { cancelling, refused } = await cancelTargets(app, userId, targets);
      if (refused[0]) throw new AppError('not_cancellable', `The message cannot be cancelled: ${refused[0].reason}`);
      const message = await findMessage(app.sql, { userId, id });
      if (!message) throw new AppError('not_found', 'Message not found');
      return reply.status(cancelling.length > 0 ? 202 : 200).send(toMessageRecord(message));
    },
  );

  app.post(
    '/api/v1/sms/batch/:batch_id/cancel',
    {
      schema: {
        tags: ['sms'],
        summary: 'Cancel every message of a batch that can be: the answer counts those cancelled, being cancelled on a phone, and not cancelled',
        params: BatchParams,
        response: { 200: BatchCancelled, ...errors('not_found'), ...authErrors },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const batchId = request.params.batch_id;
      const targets = isUuid(batchId) ? await loadCancelTargets(app.sql, { userId, batchId }) : [];
      if (targets.length === 0) throw new AppError('not_found', 'Batch not found');
      const { cancelled, cancelling, refused } = await cancelTargets(app, userId, targets);
      return {
        batch_id: batchId.toLowerCase(),
        cancelled: cancelled.length,
        cancelling: cancelling.length,
        not_cancelled: refused.length,
        not_cancelled_ids: refused.map((r) => r.id),
      };
    },
  );
};
export default cancelRoutes;
