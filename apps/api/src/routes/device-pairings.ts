import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { publicUrl } from '@smsgw/config';
import { pairingSteps } from '@smsgw/core';
import { createPairing } from '@smsgw/db';
import { Timestamp, authErrors } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const PairingBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Name of the device it enrols (default: the name the phone sends).' })) },
  { additionalProperties: false, examples: [{ name: 'Front desk phone' }] },
);
const NewPairing = Type.Object(
  {
    code: Type.String({ description: '8 digits, for the app’s "Sign in by code".' }),
    token: Type.String({ description: 'For the app’s "Private token" with "Sign up" (re-enrolling a phone registered before).' }),
    expires_at: Timestamp,
    mobile_url: Type.String({ description: 'What to type as the app’s API URL (Settings → Cloud server): PUBLIC_URL + /mobile/v1.' }),
    steps: Type.Array(Type.String(), { description: 'What the phone’s owner does with it in the SMS Gate app, in order.' }),
  },
  { $id: 'Pairing', description: 'A pairing: what to type into the SMS Gate app to enrol one phone.' },
);

/**
 * `/api/v1/device-pairings` (real-devices.md §1): a one-time enrolment of a phone, by its code or
 * its token, valid PAIRING_TTL_SECONDS; both secrets are shown once and stored hashed.
 */
const devicePairingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  // `curl -X POST` with no body at all means `{}`; an empty JSON body is still a 400.
  app.addHook('preValidation', async (request) => {
    request.body ??= {};
  });

  app.post(
    '/api/v1/device-pairings',
    {
      schema: {
        tags: ['devices'],
        summary: 'Create a pairing: a code and a token with which one phone enrols itself (docs/devices.md)',
        body: PairingBody,
        response: { 201: NewPairing, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request, reply) => {
      const { code, token, expiresAt } = await createPairing(app.sql, {
        userId: request.auth.user.id,
        name: request.body.name,
        ttlSeconds: app.config.PAIRING_TTL_SECONDS,
      });
      const mobileUrl = `${publicUrl(app.config)}/mobile/v1`;
      const steps = pairingSteps({ code, token, expiresAt, mobileUrl });
      return reply.status(201).send({ code, token, expires_at: expiresAt.toISOString(), mobile_url: mobileUrl, steps });
    },
  );
};
export default devicePairingRoutes;
