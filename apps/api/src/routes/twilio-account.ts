import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listTwilioSmsDeliveries, rotateTwilioAuthToken, twilioAccount, type TwilioAccount as Account, type TwilioSmsDeliveryRow } from '@smsgw/db';
import { authErrors, NullableTimestamp, PageOf, Pagination, Timestamp, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const TwilioAccount = Type.Object(
  {
    account_sid: Type.String({ description: "`AC` + 32 hex digits: the username of Twilio's Basic auth, and the account in its paths." }),
    messaging_service_sid: Type.String({ description: "`MG` + 32 hex digits: your whole fleet, as Twilio's `MessagingServiceSid`." }),
    auth_token: Type.String({ description: "The password of Twilio's Basic auth (an smsgw API key works too)." }),
  },
  { $id: 'TwilioAccount', description: "Your credentials for Twilio's Messages API at /2010-04-01 (docs/compatibility.md)." },
);

const TwilioSmsDelivery = Type.Object(
  {
    id: Type.String(),
    received_id: Type.String({ description: 'The received SMS (GET /api/v1/sms/received); its MessageSid is `SM` and this id without dashes.' }),
    device_id: Type.String(),
    from: Type.String(),
    url: Type.String({ description: 'The Twilio URL of the device or SIM when the SMS arrived.' }),
    state: Type.Enum(['pending', 'succeeded', 'failed']),
    attempts: Type.Integer(),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the last attempt failed; for a 2xx answer, why its TwiML sent no reply (it does not parse, or the send was refused).',
    }),
    last_attempt_at: NullableTimestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'Set exactly while the delivery is pending.' }),
    created_at: Timestamp,
  },
  { $id: 'TwilioSmsDelivery', description: 'The POST of one received SMS to its Twilio URL, and what its answer did.' },
);

const deliveryView = (d: TwilioSmsDeliveryRow) => ({
  id: d.id,
  received_id: d.receivedId,
  device_id: d.deviceId,
  from: d.from,
  url: d.url,
  state: d.state,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  last_attempt_at: d.lastAttemptAt?.toISOString() ?? null,
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  created_at: d.createdAt.toISOString(),
});

const view = (a: Account) => ({ account_sid: a.accountSid, messaging_service_sid: a.messagingServiceSid, auth_token: a.authToken });

/**
 * `GET /api/v1/twilio` and `POST /api/v1/twilio/auth-token`: the user's Twilio credentials, and rotating its Auth Token;
 * `GET /api/v1/twilio/sms-deliveries`: how the received SMS went to the devices' Twilio URLs.
 */
const twilioAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  app.get(
    '/api/v1/twilio',
    {
      schema: { tags: ['twilio'], summary: 'Your Twilio Account SID, Messaging Service SID and Auth Token', response: { 200: TwilioAccount, ...authErrors } },
    },
    async (request) => view(await twilioAccount(app.sql, request.auth.user.id)),
  );
  app.post(
    '/api/v1/twilio/auth-token',
    {
      schema: { tags: ['twilio'], summary: 'Replace your Twilio Auth Token (the old one stops working)', response: { 200: TwilioAccount, ...authErrors } },
    },
    async (request) => view(await rotateTwilioAuthToken(app.sql, request.auth.user.id)),
  );
  app.get(
    '/api/v1/twilio/sms-deliveries',
    {
      schema: {
        tags: ['twilio'],
        summary: "The POSTs of received SMS to your devices' Twilio URLs and what their TwiML answers did, newest first",
        querystring: Pagination,
        response: { 200: PageOf(TwilioSmsDelivery, 'TwilioSmsDeliveryPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listTwilioSmsDeliveries(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(deliveryView), total, request.query);
    },
  );
};
export default twilioAccountRoutes;
