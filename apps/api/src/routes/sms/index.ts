import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid, segmentInfo, statesMatching, toMessageRecord } from '@smsgw/core';
import { assertSendableText, findMessage, listMessages, sendMessages, type SendInput } from '@smsgw/db';
import { sendDeps } from '../../services/send-deps.ts';
import { IdParams, authErrors, cursorOf, cursorPage } from '../../schemas/common.ts';
import { errors } from '../../schemas/errors.ts';
import { Message } from '../../schemas/records.ts';
import { withIdempotencyKey } from '../../services/idempotency.ts';
import { loadTemplateForSend, renderForRecipients } from '../../services/render-template.ts';
import cancelRoutes from './cancel.ts';
import { IdempotencyHeaders, ListQuery, MessageList, SendBody, SendResponse, SendTemplateBody } from './schemas.ts';

const SEND_ERRORS = [
  'invalid_request',
  'invalid_phone_number',
  'too_many_recipients',
  'group_not_found',
  'device_not_found',
  'quota_exceeded',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'no_devices',
  'service_unavailable',
] as const;
const sendErrors = { ...errors(...SEND_ERRORS), ...authErrors };

/** Sending (`/api/sms/…`, spec 4.1) and reading (`/api/v1/sms…`, spec 4.3, 4.4). */
const smsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

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
        const response = await sendMessages(sendDeps(app), {
          user: request.auth.user,
          recipients,
          groupIds: group_ids ?? [],
          deviceId: device_id,
          ...deliveryOf(request.body),
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
        response: { 200: SendResponse, ...errors(...SEND_ERRORS, 'template_not_found', 'template_not_owned', 'missing_variable'), ...authErrors },
      },
    },
    async (request, reply) =>
      withIdempotencyKey(request, reply, async (idempotency) => {
        const { recipients, template_id, variables = {}, group_ids, device_id } = request.body;
        const userId = request.auth.user.id;
        const response = await sendMessages(sendDeps(app), {
          user: request.auth.user,
          recipients,
          groupIds: group_ids ?? [],
          deviceId: device_id,
          ...deliveryOf(request.body),
          compose: async (to) => {
            const template = await loadTemplateForSend(app.sql, { userId, templateId: template_id, variables });
            return renderForRecipients(app.sql, { userId, template, variables, recipients: to });
          },
          idempotency,
        });
        app.metrics.messagesAccepted.inc({ endpoint: 'send-template' }, response.recipients_count);
        return response;
      }),
  );

  await app.register(cancelRoutes);

  app.get(
    '/api/v1/sms/:id',
    { schema: { tags: ['sms'], summary: 'Get one message', params: IdParams, response: { 200: Message, ...errors('not_found'), ...authErrors } } },
    async (request) => {
      const { id } = request.params;
      const message = isUuid(id) ? await findMessage(app.sql, { userId: request.auth.user.id, id }) : null;
      if (!message) throw new AppError('not_found', 'Message not found');
      return toMessageRecord(message);
    },
  );

  app.get(
    '/api/v1/sms',
    {
      schema: {
        tags: ['sms'],
        summary: 'List messages, newest first',
        querystring: ListQuery,
        response: { 200: MessageList, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { status, to, batch_id, device_id, limit, offset } = request.query;
      const cursor = cursorOf(request.query);
      const result = await listMessages(app.listingSql, {
        userId: request.auth.user.id,
        states: status === undefined ? undefined : statesMatching(status),
        to,
        batchId: batch_id,
        deviceId: device_id,
        limit,
        offset,
        cursor,
      });
      return cursorPage(result.rows.map(toMessageRecord), result, request.query);
    },
  );
};
/** The timing and SIM of a send request, as sendMessages takes them. */
function deliveryOf(body: { send_at?: string; valid_until?: string; ttl_seconds?: number; sim_number?: number }): Pick<SendInput, 'timing' | 'simNumber'> {
  return { timing: { send_at: body.send_at, valid_until: body.valid_until, ttl_seconds: body.ttl_seconds }, simNumber: body.sim_number };
}
export default smsRoutes;
