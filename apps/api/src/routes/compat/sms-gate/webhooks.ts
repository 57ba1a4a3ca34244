import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { AppError, SMS_GATE_EVENTS, WebhookTargetError, checkWebhookUrl, isSmsGateEvent, isUuid, newId } from '@smsgw/core';
import { WebhookLimitError, deleteSmsGateWebhook, findDevice, listSmsGateWebhooks, replaceSmsGateWebhook, smsGateSettings } from '@smsgw/db';
import { MAX_WEBHOOKS } from '../../webhooks.ts';
import { smsGateErrors } from './schemas.ts';

const tags = ['sms-gate-client'];

/** Events upstream takes that smsgw never emits (it has no data SMS, MMS or app of its own): refused rather than kept silent. */
const NOT_EMITTED = ['sms:data-received', 'mms:received', 'mms:downloaded', 'app:started'];

const Events = Object.keys(SMS_GATE_EVENTS).join(', ');

/** SMS Gate's `Webhook` (client-go `smsgateway.Webhook`): one event per endpoint. */
export const SmsGateWebhook = Type.Object(
  {
    id: Type.String({ description: 'Your id for the endpoint; registering the same id again replaces it.' }),
    deviceId: Type.Union([Type.String(), Type.Null()], { description: "Only this device's events; null: every device's." }),
    url: Type.String(),
    event: Type.String({ description: `One of ${Events}.` }),
  },
  { $id: 'SmsGateWebhook', description: "A webhook endpoint in SMS Gate's format, signed with X-Signature (the settings' webhooks.signing_key)." },
);

const SmsGateWebhookRequest = Type.Object(
  {
    id: Type.Optional(Type.Union([Type.String({ maxLength: 36 }), Type.Null()], { description: 'Absent: smsgw makes one.' })),
    deviceId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    url: Type.String({ minLength: 1, description: "http(s) under smsgw's address rules (plain http is allowed, unlike upstream)." }),
    event: Type.String({ description: `One of ${Events}.` }),
  },
  { examples: [{ url: 'https://example.org/hooks/sms', event: 'sms:received' }] },
);
type SmsGateWebhookRequest = Static<typeof SmsGateWebhookRequest>;

/**
 * `/webhooks`: SMS Gate-format endpoints, stored in smsgw's one webhooks table and delivered by its
 * engine (retries, address rules, 410 disables), from phones, modems and simulated devices alike.
 * Errors use upstream's words where upstream has the check (its `ValidationError`).
 */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const route = { prefixTrailingSlash: 'no-slash' as const };

  app.get(
    '/',
    { ...route, schema: { tags, summary: 'List webhooks', response: { 200: Type.Array(SmsGateWebhook), ...smsGateErrors(401, 403, 429) } } },
    async (request) => listSmsGateWebhooks(app.sql, request.auth.user.id),
  );

  app.post(
    '/',
    {
      ...route,
      schema: {
        tags,
        summary: 'Register a webhook (one event); the same id replaces it: 201 with the webhook',
        body: SmsGateWebhookRequest,
        response: { 201: SmsGateWebhook, ...smsGateErrors(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const checked = await check(app, userId, request.body);
      // The account's signing key exists from now on (made on first use), so every delivery is signed.
      await smsGateSettings(app.sql, userId);
      const webhook = await replaceSmsGateWebhook(app.sql, { userId, ...checked, limit: MAX_WEBHOOKS }).catch((error: unknown) => {
        if (error instanceof WebhookLimitError) {
          throw new AppError('webhook_limit_reached', `a user may have at most ${MAX_WEBHOOKS} webhooks (smsgw's own count too); delete one first`);
        }
        throw error;
      });
      return reply.status(201).send(webhook);
    },
  );

  app.delete(
    '/:id',
    {
      schema: {
        tags,
        summary: 'Delete a webhook: 204, also when there was none (as upstream)',
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: { 204: Type.Null(), ...smsGateErrors(401, 403, 429) },
      },
    },
    async (request, reply) => {
      await deleteSmsGateWebhook(app.sql, { userId: request.auth.user.id, clientId: request.params.id });
      return reply.status(204).send(null);
    },
  );
};
export default webhookRoutes;

/** Upstream's checks (event, the device's owner) and smsgw's address rules for the URL. */
async function check(app: FastifyInstance, userId: string, body: SmsGateWebhookRequest) {
  const { event, url } = body;
  if (NOT_EMITTED.includes(event)) throw new AppError('invalid_request', `invalid "event" = "${event}": not emitted by this server (one of ${Events})`);
  if (!isSmsGateEvent(event)) throw new AppError('invalid_request', `invalid "event" = "${event}": invalid event`);
  const deviceId = body.deviceId || null;
  if (deviceId !== null && !(isUuid(deviceId) && (await findDevice(app.sql, { userId, id: deviceId.toLowerCase() })))) {
    throw new AppError('invalid_request', `invalid "device_id" = "${deviceId}": device not found`);
  }
  try {
    await checkWebhookUrl(url, app.webhookPolicy);
  } catch (error) {
    if (error instanceof WebhookTargetError) throw new AppError('invalid_request', `invalid "url": ${error.message}`);
    throw error;
  }
  return { clientId: body.id || newId(), url, event, deviceId: deviceId?.toLowerCase() ?? null };
}
