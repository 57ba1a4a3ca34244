import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppError } from '@smsgw/core';
import { errorResponse } from '../../../plugins/errors.ts';
import { lenientValidatorCompiler, validatorCompiler } from '../../../plugins/validation.ts';
import { twilioAuthentication } from './auth.ts';
import { TwilioError, twilioBody, twilioErrorBody } from './errors.ts';
import messageRoutes from './messages.ts';

/** Where Twilio's clients find the API: `https://api.twilio.com/2010-04-01`, here `<smsgw>/2010-04-01`. */
export const TWILIO_PREFIX = '/2010-04-01';
export { twilioErrorBody };

/**
 * Twilio's Messages API (docs/compatibility.md): a thin adapter over smsgw's one send path, its
 * message record, its cancel and the webhook engine's per-send callbacks (`StatusCallback`), under
 * `/Accounts/{AccountSid}`. Form-encoded bodies as the SDKs send them; Twilio's error body
 * `{code, message, more_info, status}`.
 */
const twilioRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const form: Record<string, string | string[]> = {};
    for (const [key, value] of new URLSearchParams(body as string)) {
      const held = form[key];
      form[key] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
    }
    done(null, form);
  });
  // Unknown query parameters are ignored, as Twilio does; bodies and paths are refused with U+0000 as everywhere.
  app.setValidatorCompiler((route) => (route.httpPart === 'querystring' ? lenientValidatorCompiler : validatorCompiler)(route));
  app.setErrorHandler(twilioErrorHandler(app));
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(twilioBody(404, 20404, `The requested resource ${request.url.split('?')[0]} was not found`));
  });
  await app.register(
    async (account) => {
      account.addHook('onRequest', twilioAuthentication(app));
      await account.register(messageRoutes);
    },
    { prefix: '/Accounts/:AccountSid' },
  );
};
export default twilioRoutes;

function twilioErrorHandler(app: FastifyInstance) {
  return (error: FastifyError | AppError | TwilioError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof TwilioError) return reply.status(error.status).send(twilioBody(error.status, error.code, error.message));
    const { status, headers, body } = errorResponse(app, error, request);
    return reply.status(status).headers(headers).send(twilioErrorBody(status, body));
  };
}
