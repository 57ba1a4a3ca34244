import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, isUuid, readInstant, segmentInfo } from '@smsgw/core';
import { assertSendableText, findSendUnit, listSendUnits, loadCancelTargets, sendMessages, type SendUnit } from '@smsgw/db';
import { sendDeps } from '../../../services/send-deps.ts';
import { cancelTargets } from '../../../services/cancel-messages.ts';
import { IdParams, ListQuery, SendQuery, SmsGateMessage, SmsGateMessageState, smsGateErrors } from './schemas.ts';
import { messageState, recipientState, stateTimes } from './states.ts';
import { toE164 } from './phone-numbers.ts';
import { assertEncryptedText, encryptedRecipients } from './ciphertext.ts';

const tags = ['sms-gate-client'];
/** Upstream clamps `limit` to this. */
const MAX_LIMIT = 100;
/** What an encrypted text is stored as: one part (quota and carrier budgets count it so), in the encoding of its ciphertext. */
const ENCRYPTED_PARTS = { segments: 1, encoding: 'GSM-7' } as const;

/**
 * `/messages` (and upstream's deprecated `/message`): send, read, list and cancel. One SMS Gate
 * message is one smsgw batch, sent through smsgw's one send function (quota, opt-outs, routing,
 * failover, budgets, sticky sender), read from smsgw's message records, cancelled by smsgw's cancel.
 */
const messageRoutes: FastifyPluginAsyncTypebox<{ deprecated: boolean }> = async (app, { deprecated }) => {
  const route = { prefixTrailingSlash: 'no-slash' as const };
  const schema = { tags, ...(deprecated && { deprecated: true }) };

  app.post(
    '/',
    {
      ...route,
      schema: {
        ...schema,
        summary: 'Send a message to up to 100 recipients: 202 with its state and Location',
        querystring: SendQuery,
        body: SmsGateMessage,
        response: { 202: SmsGateMessageState, ...smsGateErrors(400, 401, 403, 402, 409, 429, 503) },
      },
    },
    async (request, reply) => {
      const unit = await send(app, request.auth.user, request.body);
      return reply
        .status(202)
        .header('location', `/3rdparty/v1/messages/${encodeURIComponent(unit.ref)}`)
        .send(toMessageState(unit, true));
    },
  );

  app.get(
    '/',
    {
      ...route,
      schema: {
        ...schema,
        summary: 'List messages (every send of yours, whichever API sent it), the total in X-Total-Count',
        querystring: ListQuery,
        response: { 200: Type.Array(SmsGateMessageState), ...smsGateErrors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { from, to, state, deviceId, limit, offset, includeContent, sort } = request.query;
      if (deviceId !== undefined && !isUuid(deviceId)) throw new AppError('invalid_request', 'deviceId: not a device id');
      const { units, total } = await listSendUnits(app.sql, {
        userId: request.auth.user.id,
        ...(from !== undefined && { from: readInstant(from)! }),
        ...(to !== undefined && { to: readInstant(to)! }),
        ...(state !== undefined && { state }),
        ...(deviceId !== undefined && { deviceId }),
        limit: Math.max(1, Math.min(limit, MAX_LIMIT)),
        offset,
        order: sort === 'created_at' ? 'oldest' : 'newest',
      });
      return reply.header('x-total-count', String(total)).send(units.map((u) => toMessageState(u, includeContent)));
    },
  );

  app.get(
    '/:id',
    {
      schema: {
        ...schema,
        summary: "A message's state, with its text",
        params: IdParams,
        response: { 200: SmsGateMessageState, ...smsGateErrors(401, 403, 404, 429) },
      },
    },
    async (request) => toMessageState(await ownUnit(app, request.auth.user.id, request.params.id), true),
  );

  app.delete(
    '/:id',
    {
      schema: {
        ...schema,
        summary: 'Cancel a Pending message: Cancelled, or Cancelling while its SMS Gate phone is asked; 409 when it is no longer Pending',
        params: IdParams,
        response: { 200: SmsGateMessageState, ...smsGateErrors(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const unit = await ownUnit(app, userId, request.params.id);
      if (toMessageState(unit, false).state !== 'Pending') throw new AppError('not_cancellable', 'message is not pending');
      await cancelTargets(app, userId, await loadCancelTargets(app.sql, { userId, ids: unit.recipients.map((r) => r.id) }));
      return toMessageState(await ownUnit(app, userId, unit.ref), false);
    },
  );
};
export default messageRoutes;

async function ownUnit(app: FastifyInstance, userId: string, ref: string): Promise<SendUnit> {
  const unit = await findSendUnit(app.sql, { userId, ref });
  if (!unit) throw new AppError('not_found', 'message not found');
  return unit;
}

/** Upstream's checks (client-go `Message.Validate`, server `prepareMessage`) with its words, then smsgw's one send. */
async function send(app: FastifyInstance, user: Parameters<typeof sendMessages>[1]['user'], body: SmsGateMessage): Promise<SendUnit> {
  if (body.dataMessage != null) throw new AppError('invalid_request', 'data messages are not supported by this server');
  const texts = [body.message || null, body.textMessage?.text ?? null].filter((t) => t !== null);
  if (texts.length === 0) throw new AppError('invalid_request', 'validation failed: must specify exactly one of: textMessage or dataMessage');
  if (texts.length > 1) throw new AppError('invalid_request', 'conflict fields: must specify exactly one of: textMessage or dataMessage');
  if (body.ttl != null && body.validUntil != null) throw new AppError('invalid_request', 'conflict fields: ttl and validUntil');
  const now = Date.now();
  const scheduleAt = body.scheduleAt == null ? undefined : readInstant(body.scheduleAt)!;
  if (scheduleAt && scheduleAt.getTime() <= now) throw new AppError('invalid_request', 'validation failed: scheduleAt must be in the future');
  const validUntil = body.ttl != null ? new Date(now + body.ttl * 1000) : body.validUntil == null ? undefined : readInstant(body.validUntil)!;
  if (validUntil && validUntil.getTime() <= now) throw new AppError('invalid_request', 'validUntil must be in the future');
  if (scheduleAt && validUntil && scheduleAt > validUntil) throw new AppError('invalid_request', 'scheduleAt must be less than or equal to validUntil');
  const encrypted = body.isEncrypted === true;
  const recipients = encrypted ? encryptedRecipients(body.phoneNumbers) : toE164(body.phoneNumbers, app.config.PHONE_DEFAULT_REGION);
  const text = texts[0]!;
  assertSendableText(text, 'textMessage.text');
  if (encrypted) assertEncryptedText(text, 'textMessage.text');
  // smsgw cannot count the parts of a text it cannot read: an encrypted message counts as one (docs/compatibility.md).
  const { encoding, segments } = encrypted ? ENCRYPTED_PARTS : segmentInfo(text);

  const response = await sendMessages(sendDeps(app), {
    user,
    recipients,
    groupIds: [],
    deviceId: body.deviceId || undefined,
    timing: { send_at: scheduleAt?.toISOString(), valid_until: validUntil?.toISOString() },
    simNumber: body.simNumber ?? undefined,
    batch: { externalId: body.id || null },
    priority: body.priority ?? 0,
    withDeliveryReport: body.withDeliveryReport ?? true,
    compose: () => ({ kind: 'same', body: text, segments, encoding }),
    idempotency: undefined,
    encrypted,
  });
  app.metrics.messagesAccepted.inc({ endpoint: 'sms-gate' }, response.recipients_count);
  const unit = await findSendUnit(app.sql, { userId: user.id, ref: body.id || response.batch_id! });
  if (!unit) throw new Error('a batch just stored was not found');
  return unit;
}

/** A unit as SMS Gate's `MessageState`; `withContent`: with its text (the first recipient's, for a template send). */
export function toMessageState(unit: SendUnit, withContent: boolean): SmsGateMessageState {
  const recipients = unit.recipients.map((r) => ({
    phoneNumber: r.to,
    state: recipientState(r),
    ...(r.state === 'failed' && r.error !== null && { error: r.error }),
  }));
  return {
    id: unit.ref,
    deviceId: unit.deviceId ?? '',
    state: messageState(recipients.map((r) => r.state)),
    isHashed: false,
    isEncrypted: unit.encrypted,
    recipients,
    states: stateTimes(unit.recipients),
    ...(withContent && unit.recipients[0] && { textMessage: { text: unit.recipients[0].body } }),
  };
}
