import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { sendDeps } from '../../../services/send-deps.ts';
import { lenientValidatorCompiler } from '../../../plugins/validation.ts';
import { answerOf, type KannelAnswer } from './answers.ts';
import { sendsms } from './sendsms.ts';

const param = (description: string) => Type.Optional(Type.String({ description }));

/** The CGI variables of `sendsms` (Kannel's user guide, "SMS Push (send-sms) CGI Variables"), as smsgw reads them. */
const SendsmsQuery = Type.Object({
  username: param('The smsgw user name (alias `user`).'),
  password: param("One of the user's API keys (alias `pass`)."),
  to: param('One or several numbers separated by spaces (`+` in a query): `+4915…`, `004915…` or `4915…`.'),
  text: param('The message (GET), in `charset`.'),
  from: param('The sender as the client names it: reported as `%P` in DLRs; a phone sends from its own number.'),
  coding: param('0 (7 bits, default) or 2 (UCS-2); 1 (8-bit data) is refused. smsgw encodes each text itself.'),
  charset: param('The charset of `text`: UTF-8 by default, UTF-16BE with coding=2.'),
  'dlr-url': param('URL called with GET for each delivery report that `dlr-mask` selects, its escape codes filled in.'),
  'dlr-mask': param('1 delivered, 2 not delivered, 8 sent, 16 not sent (sum them); 4 is never reported.'),
  smsc: param("The id of the smsgw device to send from (else the fleet's routing decides)."),
  validity: param('Minutes the message may wait for a device.'),
  deferred: param('Minutes to wait before sending.'),
  priority: param('0 to 3: accepted, not used.'),
});

const headerParam = (name: string) => Type.Optional(Type.String({ description: `The \`${name}\` variable.` }));
const SendsmsHeaders = Type.Object(
  Object.fromEntries(
    ['Username', 'Password', 'To', 'From', 'Coding', 'DLR-URL', 'DLR-Mask', 'SMSC', 'Validity', 'Deferred'].map((name) => [
      `x-kannel-${name.toLowerCase()}`,
      headerParam(name.toLowerCase()),
    ]),
  ),
  { additionalProperties: true },
);

const answer = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });
const responses = {
  202: answer('`0: Accepted for delivery`, or `3: Queued for later delivery` when no device is available now (the messages wait for one).'),
  400: answer('A field Kannel would refuse, in its words (`Missing receiver number, rejected`, `Coding field misformed, rejected`, …).'),
  402: answer('The monthly quota is used up (`Monthly message quota exceeded, rejected`).'),
  403: answer('`Authorization failed for sendsms`, or `Not routable. Do not try again.` for an unknown `smsc`.'),
  415: answer('A POST whose content type smsgw does not send (`Unsupported content-type, rejected`).'),
  503: answer('`Temporal failure, try again later.`'),
};

function send(reply: FastifyReply, { status, text, retryAfterSeconds }: KannelAnswer): FastifyReply {
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  return reply.status(status).headers({ 'content-type': 'text/html', pragma: 'no-cache', 'cache-control': 'no-cache' }).send(text);
}

export const KANNEL_PREFIX = '/cgi-bin';

/** smsgw's refusals before routing (a path Fastify cannot read), as Kannel answers: one line of text. */
export const kannelErrorBody = (_status: number, body: { message: string }): string => body.message;

/**
 * Kannel's `sendsms` (docs/compatibility.md, "Kannel"): a thin adapter over smsgw's send path that
 * answers in Kannel's status codes and one-line texts, never in smsgw's JSON.
 */
const kannelRoutes: FastifyPluginAsync = async (app) => {
  // Kannel ignores variables it does not know; the schemas only document (every variable is read raw).
  app.setValidatorCompiler(lenientValidatorCompiler);
  // Kannel reads the POST body as bytes in the charset its Content-Type names.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error, request, reply) => {
    const found = answerOf(error);
    if (found.status >= 500) request.log.error({ err: error }, 'kannel sendsms failed');
    return send(reply, found);
  });

  const deps = sendDeps(app);
  const summary = 'Kannel sendsms: send a text to one or several numbers';
  // Validation only documents: every variable is read from the raw request, as Kannel reads it.
  app.get(
    '/sendsms',
    { exposeHeadRoute: false, attachValidation: true, schema: { tags: ['kannel'], summary, querystring: SendsmsQuery, response: responses } },
    async (request, reply) => send(reply, await sendsms(app, deps, request)),
  );
  app.post(
    '/sendsms',
    {
      attachValidation: true,
      schema: {
        tags: ['kannel'],
        summary: `${summary} (the text as the body, the rest in X-Kannel-* headers or the query)`,
        querystring: SendsmsQuery,
        headers: SendsmsHeaders,
        response: responses,
      },
    },
    async (request, reply) => send(reply, await sendsms(app, deps, request)),
  );
};

export default kannelRoutes;
