import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, storableText } from '@smsgw/core';
import { findUser, registerPairedPhone, updatePhone } from '@smsgw/db';
import { ErrorBody } from '../../../schemas/common.ts';
import { appVersionOf, pairingSecret, phoneAuthentication } from './phone-auth.ts';
import { registrationLimits } from './registration-limits.ts';
import { storableSimCards } from './sim-cards.ts';
import { ExternalIp, PatchDeviceBody, phoneErrors, RegisterBody, Registered } from './wire.ts';

const tags = ['sms-gate'];

/**
 * Enrolment and the device record (real-devices.md §1, §2, §2b.1-2): `POST /device` spends a
 * pairing, `PATCH /device` is the app's check at every start (401 makes it register again).
 */
const registrationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const authenticate = phoneAuthentication(app, { recordVersion: true });

  app.post(
    '/device',
    {
      onRequest: [pairingSecret, registrationLimits(app)],
      // Counted by registrationLimits instead: per address and per pairing.
      config: { rateLimit: false },
      schema: {
        tags,
        summary: 'Register the phone with a pairing (`Authorization: Code <8 digits>` or `Bearer <pairing token>`): each pairing registers one phone',
        body: RegisterBody,
        response: { 201: Registered, 400: ErrorBody, 401: ErrorBody, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const { name, pushToken, simCards } = request.body;
      const phone = await registerPairedPhone(app.sql, request.pairingSecret, {
        name: storableText(name).trim().slice(0, 100) || 'SMS Gate phone',
        appVersion: appVersionOf(request) ?? null,
        pushToken: Boolean(pushToken),
        simCards: storableSimCards(simCards) ?? null,
      });
      if (!phone) throw new AppError('unauthorized', 'This pairing code or token is unknown, used or expired: create a new pairing.');
      const user = await findUser(app.sql, phone.userId);
      const login = user && user.name.length <= 64 ? user.name : 'smsgw';
      return reply.status(201).send({ id: phone.id, token: phone.token, login });
    },
  );

  app.patch(
    '/device',
    {
      onRequest: authenticate,
      schema: {
        tags,
        summary: 'The phone’s check at every start: its push token (when it has one) and SIM cards',
        body: PatchDeviceBody,
        response: { 204: Type.Null(), 400: ErrorBody, 403: ErrorBody, ...phoneErrors },
      },
    },
    async (request, reply) => {
      const { id, pushToken, simCards } = request.body;
      if (id.toLowerCase() !== request.device.id) throw new AppError('forbidden', 'This is not the id of the device of this token.');
      await updatePhone(app.sql, { deviceId: request.device.id, pushToken: Boolean(pushToken), simCards: storableSimCards(simCards) });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/device',
    {
      onRequest: authenticate,
      schema: { tags, summary: 'The address the phone’s requests come from', response: { 200: ExternalIp, ...phoneErrors } },
    },
    async (request) => ({ externalIp: request.ip }),
  );

  const notImplemented = async () => {
    throw new AppError('not_implemented', 'smsgw has no user accounts for the app: pair phones from smsgw instead.');
  };
  app.get('/user/code', { schema: { tags, summary: 'Not offered: pair phones from smsgw', response: { 501: ErrorBody } } }, notImplemented);
  app.patch(
    '/user/password',
    { onRequest: authenticate, schema: { tags, summary: 'Not offered: smsgw has no app passwords', response: { 501: ErrorBody, ...phoneErrors } } },
    notImplemented,
  );
};
export default registrationRoutes;
