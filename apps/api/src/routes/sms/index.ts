import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, MessageRecordSchema, isUuid, segmentInfo, statesMatching, toMessageRecord } from '@smsgw/core';
import { findMessage, listMessages } from '@smsgw/db';
import { ErrorBody, IdParams, authErrors } from '../../schemas/common.ts';
import { withIdempotencyKey } from '../../services/idempotency.ts';
import { assertSendableText, sendMessages } from '../../services/send-messages.ts';
import { loadTemplateForSend, renderForRecipients } from '../../services/render-template.ts';
import { IdempotencyHeaders, ListQuery, MessageList, SendBody, SendResponse, SendTemplateBody, SendTemplateErrorBody } from './schemas.ts';

const sendErrors = { 400: ErrorBody, 402: ErrorBody, 409: ErrorBody, 422: ErrorBody, 503: ErrorBody, ...authErrors };

/** Sending (`/api/sms/…`, spec 4.1) and reading (`/api/v1/sms…`, spec 4.3, 4.4). */
const smsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  const sendDeps = () => ({ db: app.db, sql: app.sql, dispatchQueue: app.dispatchQueue, config: app.config, incidents: app.incidents });

  app.post(
    '/api/sms/send',
    {
      schema: {
        tags: ['sms'],
        summary: 'Send a text to recipients and/or groups',
        headers: IdempotencyHeaders,
        body: SendBody,
        response: { 200: SendResponse, ...sendErrors },
      },
    },
    async (request, reply) => {
      assertSendableText(request.body.body, 'body');
      return withIdempotencyKey(request, reply, async (idempotency) => {
        const { body, recipients, group_ids, device_id } = request.body;
        const { encoding, segments } = segmentInfo(body);
        const response = await sendMessages(sendDeps(), {
          user: request.auth.user,
          recipients,
          groupIds: group_ids ?? [],
          deviceId: device_id,
          compose: () => ({ kind: 'same', body, segments, encoding }),
          idempotency,
        });
        app.metrics.messagesAccepted.inc({ endpoint: 'send' }, response.recipients_count);
        return response;
      });
    },
  );

  app.post(
    '/api/sms/send-template',
    {
      schema: {
        tags: ['sms'],
        summary: 'Send a template, rendered per recipient, to recipients and/or groups',
        headers: IdempotencyHeaders,
        body: SendTemplateBody,
        response: { 200: SendResponse, ...sendErrors, 400: SendTemplateErrorBody },
      },
    },
    async (request, reply) =>
      withIdempotencyKey(request, reply, async (idempotency) => {
        const { recipients, template_id, variables = {}, group_ids, device_id } = request.body;
        const userId = request.auth.user.id;
        const response = await sendMessages(
          sendDeps(),
          {
            user: request.auth.user,
            recipients,
            groupIds: group_ids ?? [],
            deviceId: device_id,
            compose: async (to) => {
              const template = await loadTemplateForSend(app.db, { userId, templateId: template_id, variables });
              return renderForRecipients(app.db, { userId, template, variables, recipients: to });
            },
            idempotency,
          },
        );
        app.metrics.messagesAccepted.inc({ endpoint: 'send-template' }, response.recipients_count);
        return response;
      }),
  );

  app.get(
    '/api/v1/sms/:id',
    { schema: { tags: ['sms'], summary: 'Get one message', params: IdParams, response: { 200: MessageRecordSchema, 404: ErrorBody, ...authErrors } } },
    async (request) => {
      const { id } = request.params;
      const message = isUuid(id) ? await findMessage(app.db, { userId: request.auth.user.id, id }) : null;
      if (!message) throw new AppError('not_found', 'Message not found');
      return toMessageRecord(message);
    },
  );

  app.get(
    '/api/v1/sms',
    { schema: { tags: ['sms'], summary: 'List messages, newest first', querystring: ListQuery, response: { 200: MessageList, 400: ErrorBody, ...authErrors } } },
    async (request) => {
      const { status, to, batch_id, device_id, limit, offset } = request.query;
      const { rows, total } = await listMessages(app.db, {
        userId: request.auth.user.id,
        states: status === undefined ? undefined : statesMatching(status),
        to,
        batchId: batch_id,
        deviceId: device_id,
        limit,
        offset,
      });
      return { data: rows.map(toMessageRecord), total, limit, offset };
    },
  );
};
export default smsRoutes;
