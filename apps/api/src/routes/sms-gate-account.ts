import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { publicUrl } from '@smsgw/config';
import { smsGateSettings } from '@smsgw/db';
import { authErrors } from '../schemas/common.ts';

const SmsGateAccount = Type.Object(
  {
    url: Type.String({ description: "The base URL SMS Gate's libraries take: this server's address and `/3rdparty/v1`." }),
    username: Type.String({ description: "The username of SMS Gate's Basic auth: your user name (your user id works too)." }),
    user_id: Type.String({ format: 'uuid' }),
    webhook_signing_key: Type.String({
      description: 'The key of the `X-Signature` of the SMS Gate-format webhooks smsgw sends you (`webhooks.signing_key` of /3rdparty/v1/settings).',
    }),
  },
  {
    $id: 'SmsGateAccount',
    description:
      "Your credentials for SMS Gate's client API at /3rdparty/v1 (docs/compatibility.md): the password of its Basic auth, or its Bearer token, is any of your API keys.",
  },
);

/** `GET /api/v1/sms-gate`: what SMS Gate's libraries need to be pointed at smsgw. */
const smsGateAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  app.get(
    '/api/v1/sms-gate',
    {
      schema: {
        tags: ['sms-gate-client'],
        summary: 'Your SMS Gate client API address, username and webhook signing key',
        response: { 200: SmsGateAccount, ...authErrors },
      },
    },
    async (request) => {
      const { user } = request.auth;
      const settings = await smsGateSettings(app.sql, user.id);
      return {
        url: `${publicUrl(app.config)}/3rdparty/v1`,
        username: user.name,
        user_id: user.id,
        webhook_signing_key: String(settings.webhooks?.signing_key ?? ''),
      };
    },
  );
};
export default smsGateAccountRoutes;
