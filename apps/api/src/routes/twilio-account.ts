import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { rotateTwilioAuthToken, twilioAccount, type TwilioAccount as Account } from '@smsgw/db';
import { authErrors } from '../schemas/common.ts';

const TwilioAccount = Type.Object({
  account_sid: Type.String({ description: '`AC` + 32 hex digits: the username of Twilio\'s Basic auth, and the account in its paths.' }),
  messaging_service_sid: Type.String({ description: '`MG` + 32 hex digits: your whole fleet, as Twilio\'s `MessagingServiceSid`.' }),
  auth_token: Type.String({ description: 'The password of Twilio\'s Basic auth (an smsgw API key works too).' }),
}, { $id: 'TwilioAccount', description: 'Your credentials for Twilio\'s Messages API at /2010-04-01 (docs/compatibility.md).' });

const view = (a: Account) => ({ account_sid: a.accountSid, messaging_service_sid: a.messagingServiceSid, auth_token: a.authToken });

/** `GET /api/v1/twilio` and `POST /api/v1/twilio/auth-token`: the user's Twilio credentials, and rotating its Auth Token. */
const twilioAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  app.get('/api/v1/twilio', {
    schema: { tags: ['twilio'], summary: 'Your Twilio Account SID, Messaging Service SID and Auth Token', response: { 200: TwilioAccount, ...authErrors } },
  }, async (request) => view(await twilioAccount(app.sql, request.auth.user.id)));
  app.post('/api/v1/twilio/auth-token', {
    schema: { tags: ['twilio'], summary: 'Replace your Twilio Auth Token (the old one stops working)', response: { 200: TwilioAccount, ...authErrors } },
  }, async (request) => view(await rotateTwilioAuthToken(app.sql, request.auth.user.id)));
};
export default twilioAccountRoutes;
