import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Compile } from 'typebox/compile';
import { AppError, parseDeviceDate } from '@smsgw/core';
import { webhookDevice } from '@smsgw/db';
import { credentialKey } from '../../../plugins/credential-cache.ts';
import { ErrorBody } from '../../../schemas/common.ts';
import { receiveInbound } from '../../../services/device-core.ts';
import { healthFromPing } from './ping.ts';
import { InboundAnswer, InboundBody, InboundParams, ReceivedSmsPayload } from './wire.ts';

const tags = ['sms-gate'];

/** How far the phone's `X-Timestamp` may be from smsgw's clock. */
const TIMESTAMP_TOLERANCE_SECONDS = 300;

const isReceivedSms = Compile(ReceivedSmsPayload);

/**
 * The phone's webhook of incoming SMS (real-devices.md §2, §2b.9): no bearer token, so it is
 * authenticated by the secret in its URL and the signature of its body with the device's signing
 * key (pushed in its settings). Each SMS is stored once, whatever the retries.
 */
const inboundRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/inbound/:deviceId/:secret',
    {
      // The request log would show the URL, whose last segment is a secret.
      logLevel: 'warn',
      // Before the body's shape is checked: an unsigned request learns nothing about it.
      preValidation: async (request: FastifyRequest<{ Params: { deviceId: string; secret: string } }>) => {
        const { deviceId, secret } = request.params;
        // A known address costs no statement (the credential cache; a change of its secret or key is announced).
        const found = await app.credentialCache.get(
          credentialKey(`webhook:${deviceId}`, secret),
          () => webhookDevice(app.sql, deviceId, secret),
          (d) => d.device.userId,
        );
        if (!found) throw new AppError('unauthorized', 'Unknown webhook address.');
        const timestamp = request.headers['x-timestamp'];
        if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
          throw new AppError('unauthorized', 'X-Timestamp is missing or more than 5 minutes away from the server’s clock.');
        }
        if (!signedBy(found.signingKey, request.rawBody ?? Buffer.alloc(0), timestamp, request.headers['x-signature'])) {
          throw new AppError('unauthorized', 'X-Signature does not match the body.');
        }
        request.device = found.device;
      },
      schema: {
        tags,
        summary:
          'Incoming SMS from the phone (its `sms:received` webhook, signed with the key of its settings) and its health (`system:ping`); other events are ignored',
        params: InboundParams,
        body: InboundBody,
        response: { 202: InboundAnswer, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 415: ErrorBody, 429: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { event, deviceId, payload } = request.body;
      const { device } = request;
      if (deviceId.toLowerCase() !== device.id) throw new AppError('forbidden', 'The body’s deviceId is not the device of this webhook address.');
      if (event === 'system:ping') {
        await app.recordHealth(device.id, healthFromPing(payload));
        return reply.status(202).send({ stored: 0, duplicates: 0 });
      }
      if (event !== 'sms:received') return reply.status(202).send({ stored: 0, duplicates: 0 });
      if (!isReceivedSms.Check(payload)) throw new AppError('invalid_request', 'The payload is not an incoming SMS.');
      const from = payload.sender ?? payload.phoneNumber;
      if (from === undefined) throw new AppError('invalid_request', 'The payload has no sender.');
      const arrival = new Date();
      const receivedAt = parseDeviceDate(payload.receivedAt, arrival);
      // An unreadable receive time is the same text on every retry: it still names the SMS.
      const when = receivedAt === arrival ? `raw:${payload.receivedAt ?? ''}` : receivedAt.toISOString();
      const { simNumber } = payload;
      const sms = {
        from,
        to: payload.recipient || null,
        body: payload.message,
        simNumber: simNumber !== undefined && simNumber >= 1 && simNumber <= 255 ? simNumber : null,
        receivedAt,
        // The app's messageId is a short hash of the SMS: with its receive time it names one SMS.
        dedupKey: `sms-gate:${payload.messageId}:${when}`,
      };
      return reply.status(202).send(await receiveInbound(app, device, [sms]));
    },
  );
};

/** `X-Signature`: hex HMAC-SHA256 of the raw body followed by `X-Timestamp`, keyed by the signing key. */
function signedBy(key: string, body: Buffer, timestamp: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature.trim())) return false;
  const expected = createHmac('sha256', key).update(body).update(timestamp).digest();
  return timingSafeEqual(expected, Buffer.from(signature.trim(), 'hex'));
}

export default inboundRoutes;
