import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, WebhookTargetError, checkWebhookUrl, isUuid } from '@smsgw/core';
import {
  WebhookLimitError,
  createTestDelivery,
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookRow,
} from '@smsgw/db';
import { enqueueWebhookDeliveries } from '@smsgw/queue';
import { IdParams, PageOf, Pagination, Timestamp, authErrors, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';
import { DeliveryParams, DeliveryRecord, Description, Events, Secret, Url, WebhookRecord, toDeliveryRecord, toRecord } from '../schemas/webhook-record.ts';

export const MAX_WEBHOOKS = 20;

/** `/api/v1/webhooks`: endpoints that receive the user's message events, signed as Standard Webhooks. */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  async function own(userId: string, id: string): Promise<WebhookRow> {
    const webhook = isUuid(id) ? await findWebhook(app.sql, { userId, id }) : null;
    if (!webhook) throw new AppError('not_found', 'Webhook not found');
    return webhook;
  }
  async function ownEnabled(userId: string, id: string): Promise<WebhookRow> {
    const webhook = await own(userId, id);
    if (!webhook.enabled) throw new AppError('webhook_disabled');
    return webhook;
  }
  async function checkUrl(url: string | undefined): Promise<void> {
    if (url === undefined) return;
    try {
      await checkWebhookUrl(url, app.webhookPolicy);
    } catch (error) {
      if (error instanceof WebhookTargetError) throw new AppError('invalid_webhook_url', error.message);
      throw error;
    }
  }
  /** The delivery row is the outbox: if Redis refuses the job, the dispatcher's sweep enqueues it. */
  async function enqueue(delivery: { id: string; webhookId: string }): Promise<void> {
    const deliveryId = delivery.id;
    try {
      // A retried delivery may still have a job waiting for its next attempt, which a new add would leave waiting.
      const job = await app.webhooksQueue.getJob(deliveryId);
      if (job && (await job.isDelayed())) await job.promote();
      else await enqueueWebhookDeliveries(app.webhooksQueue, [delivery]);
    } catch (error) {
      app.incidents.report('webhook enqueue failed: left to the outbox sweep', error, { deliveryId });
    }
  }

  app.post(
    '/api/v1/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Create a webhook endpoint (its secret is shown once)',
        body: Type.Object(
          { url: Url, events: Events, description: Type.Optional(Description) },
          {
            additionalProperties: false,
            examples: [{ url: 'https://example.org/hooks/smsgw', events: ['message.delivered', 'message.failed'], description: 'CRM' }],
          },
        ),
        response: {
          201: Type.Intersect([WebhookRecord, Type.Object({ secret: Secret })], { $id: 'NewWebhook', description: 'The webhook endpoint, with its secret.' }),
          ...errors('invalid_request', 'invalid_webhook_url', 'webhook_limit_reached'),
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      await checkUrl(request.body.url);
      const { secret, webhook } = await createWebhook(app.sql, { userId: request.auth.user.id, ...request.body, limit: MAX_WEBHOOKS }).catch((error) => {
        if (error instanceof WebhookLimitError) {
          throw new AppError('webhook_limit_reached', `A user may have at most ${MAX_WEBHOOKS} webhook endpoints; delete one first.`);
        }
        throw error;
      });
      return reply.status(201).send({ ...toRecord(webhook), secret });
    },
  );

  app.get(
    '/api/v1/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List webhook endpoints, newest first',
        querystring: Pagination,
        response: { 200: PageOf(WebhookRecord, 'WebhookPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listWebhooks(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(toRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/webhooks/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Get a webhook endpoint',
        params: IdParams,
        response: { 200: WebhookRecord, ...errors('not_found'), ...authErrors },
      },
    },
    async (request) => toRecord(await own(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/webhooks/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Change a webhook endpoint; enabling it clears disabled_reason',
        params: IdParams,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            events: Type.Optional(Events),
            description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'null removes it.' })),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ enabled: true }] },
        ),
        response: { 200: WebhookRecord, ...errors('invalid_request', 'invalid_webhook_url', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const { id } = request.params;
      await own(userId, id);
      await checkUrl(request.body.url);
      const webhook = await updateWebhook(app.sql, { userId, id, ...request.body });
      if (!webhook) throw new AppError('not_found', 'Webhook not found');
      return toRecord(webhook);
    },
  );

  app.delete(
    '/api/v1/webhooks/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint and its deliveries',
        params: IdParams,
        response: { 204: Type.Null(), ...errors('not_found'), ...authErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteWebhook(app.sql, { userId: request.auth.user.id, id }))) throw new AppError('not_found', 'Webhook not found');
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Give the endpoint a new secret; the previous one keeps signing alongside it for 24 hours',
        params: IdParams,
        response: {
          200: Type.Object(
            { id: Type.String(), secret: Secret, previous_secret_expires_at: Timestamp },
            { $id: 'RotatedSecret', description: 'The new secret.' },
          ),
          ...errors('not_found'),
          ...authErrors,
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const rotated = isUuid(id) ? await rotateWebhookSecret(app.sql, { userId: request.auth.user.id, id }) : null;
      if (!rotated) throw new AppError('not_found', 'Webhook not found');
      return { id: rotated.id, secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt.toISOString() };
    },
  );

  app.post(
    '/api/v1/webhooks/:id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a webhook.test event to the endpoint',
        params: IdParams,
        response: { 202: DeliveryRecord, ...errors('not_found', 'webhook_disabled'), ...authErrors },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const webhook = await ownEnabled(userId, request.params.id);
      const delivery = await createTestDelivery(app.sql, { userId, webhookId: webhook.id });
      await enqueue({ id: delivery.id, webhookId: webhook.id });
      return reply.status(202).send(toDeliveryRecord(delivery));
    },
  );

  app.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "List the endpoint's deliveries, newest first",
        params: IdParams,
        querystring: Pagination,
        response: { 200: PageOf(DeliveryRecord, 'WebhookDeliveryPage'), ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const webhook = await own(userId, request.params.id);
      const { rows, total } = await listWebhookDeliveries(app.sql, { userId, webhookId: webhook.id, ...request.query });
      return page(rows.map(toDeliveryRecord), total, request.query);
    },
  );

  app.post(
    '/api/v1/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Attempt a delivery again now (any state; its attempts keep counting)',
        params: DeliveryParams,
        response: { 202: DeliveryRecord, ...errors('not_found', 'webhook_disabled'), ...authErrors },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const { id, deliveryId } = request.params;
      await ownEnabled(userId, id);
      const delivery = isUuid(deliveryId) ? await retryWebhookDelivery(app.sql, { userId, webhookId: id, id: deliveryId }) : null;
      if (!delivery) throw new AppError('not_found', 'Delivery not found');
      await enqueue({ id: delivery.id, webhookId: id });
      return reply.status(202).send(toDeliveryRecord(delivery));
    },
  );
};
export default webhookRoutes;
