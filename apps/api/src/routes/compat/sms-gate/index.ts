import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppError } from '@smsgw/core';
import { errorResponse, type ErrorBodyShape } from '../../../plugins/errors.ts';
import { lenientValidatorCompiler, validatorCompiler } from '../../../plugins/validation.ts';
import { smsGateAuthentication } from './auth.ts';
import deviceRoutes from './devices.ts';
import healthRoutes from './health.ts';
import inboxRoutes from './inbox.ts';
import logsRoutes from './logs.ts';
import inboxRefreshRoutes from './inbox-refresh.ts';
import messageRoutes from './messages.ts';
import settingsRoutes from './settings.ts';
import tokenRoutes from './tokens.ts';
import webhookRoutes from './webhooks.ts';
import { isKnownRegion } from './phone-numbers.ts';
import { SmsGateError } from './schemas.ts';

/** Where SMS Gate's clients find the API: their base URL is `<smsgw>/3rdparty/v1`. */
export const SMS_GATE_PREFIX = '/3rdparty/v1';

/**
 * SMS Gate's client API (docs/compatibility.md): a thin adapter over smsgw's one send path, its
 * message record, its cancel, its received SMS and the account's SMS Gate settings. Its own error shape (`{message}`, 401 `Unauthorized`), its own
 * credentials (Basic as well as Bearer), and its schemas read as upstream reads them: unknown query
 * parameters and fields are ignored. Every response carries upstream's `Link` to its API catalogue.
 */
const smsGateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const region = app.config.PHONE_DEFAULT_REGION;
  if (region !== undefined && !isKnownRegion(region)) {
    throw new Error(`PHONE_DEFAULT_REGION=${region} is not a region libphonenumber knows (an ISO 3166 code such as DE).`);
  }
  // Unknown query parameters are ignored as upstream does; bodies and paths are refused with U+0000 as everywhere.
  app.setValidatorCompiler((route) => (route.httpPart === 'querystring' ? lenientValidatorCompiler : validatorCompiler)(route));
  app.setErrorHandler(smsGateErrorHandler(app));
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ message: `Cannot ${request.method} ${request.url.split('?')[0]}` }));
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('link', '</.well-known/api-catalog>; rel="api-catalog"');
  });

  await app.register(healthRoutes);
  await app.register(async (authenticated) => {
    authenticated.addHook('onRequest', smsGateAuthentication(app));
    const login = {
      tags: ['sms-gate-client'],
      summary: 'Answers 200 to a valid login (integrations check their credentials with it)',
      response: { 200: Type.Object({ message: Type.String() }), 401: SmsGateError, 403: SmsGateError },
    };
    authenticated.get('/', { prefixTrailingSlash: 'no-slash', schema: login }, async () => ({ message: 'OK' }));
    // The same with the slash, as Home Assistant's integration calls it (`{base}/`); the document lists the one without.
    authenticated.get('/', { prefixTrailingSlash: 'slash', schema: { ...login, hide: true } }, async () => ({ message: 'OK' }));
    await authenticated.register(tokenRoutes, { prefix: '/auth' });
    // `/message` and `/device` are upstream's deprecated spellings, still called by its clients.
    for (const [messages, devices] of [
      ['/messages', '/devices'],
      ['/message', '/device'],
    ] as const) {
      await authenticated.register(messageRoutes, { prefix: messages, deprecated: messages === '/message' });
      await authenticated.register(deviceRoutes, { prefix: devices, deprecated: devices === '/device' });
    }
    await authenticated.register(webhookRoutes, { prefix: '/webhooks' });
    await authenticated.register(inboxRoutes, { prefix: '/inbox' });
    // `/inbox/refresh` in a file of its own beside the inbox's list.
    await authenticated.register(inboxRefreshRoutes, { prefix: '/inbox' });
    await authenticated.register(settingsRoutes, { prefix: '/settings' });
    await authenticated.register(logsRoutes, { prefix: '/logs' });
  });
};
export default smsGateRoutes;

/** smsgw's own error answer, reshaped as upstream's: `{message}` alone, and 401's text `Unauthorized`. */
export function smsGateErrorBody(status: number, body: ErrorBodyShape): { message: string } {
  return { message: status === 401 ? 'Unauthorized' : body.message };
}

function smsGateErrorHandler(app: FastifyInstance) {
  return (error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, headers, body } = errorResponse(app, error, request);
    return reply.status(status).headers(headers).send(smsGateErrorBody(status, body));
  };
}
