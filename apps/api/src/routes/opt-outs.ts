import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isE164 } from '@smsgw/core';
import { addOptOut, listOptOuts, removeOptOut, type OptOutRow } from '@smsgw/db';
import { PageOf, Pagination, Timestamp, authErrors, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const Phone = Type.String({ description: 'E.164, as a recipient of a send.' });

const OptOutRecord = Type.Object(
  {
    phone: Type.String(),
    source: Type.Union([Type.Literal('keyword'), Type.Literal('api')], {
      description: '`keyword`: the number replied STOP (or another opt-out keyword); `api`: added here.',
    }),
    created_at: Timestamp,
  },
  {
    $id: 'OptOut',
    description: 'A number that gets no messages from you: a send to it fails at once with "recipient opted out".',
    examples: [{ phone: '+15551234567', source: 'keyword', created_at: '2026-11-26T10:00:00.000Z' }],
  },
);

function toOptOutRecord(o: OptOutRow) {
  return { phone: o.phone, source: o.source as 'keyword' | 'api', created_at: o.createdAt.toISOString() };
}

function checkPhone(phone: string): void {
  if (!isE164(phone)) throw new AppError('invalid_phone_number');
}

/** `/api/v1/opt-outs`: the caller's opt-out list (docs/http-api.md, "Opt-outs"). */
const optOutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/api/v1/opt-outs',
    {
      schema: {
        tags: ['opt-outs'],
        summary: 'List the numbers that opted out, newest first',
        querystring: Pagination,
        response: { 200: PageOf(OptOutRecord, 'OptOutPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listOptOuts(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(toOptOutRecord), total, request.query);
    },
  );

  app.post(
    '/api/v1/opt-outs',
    {
      schema: {
        tags: ['opt-outs'],
        summary: 'Add a number to the opt-out list (201; 200 with the existing entry when it is listed already)',
        body: Type.Object({ phone: Phone }, { additionalProperties: false, examples: [{ phone: '+15551234567' }] }),
        response: { 200: OptOutRecord, 201: OptOutRecord, ...errors('invalid_request', 'invalid_phone_number'), ...authErrors },
      },
    },
    async (request, reply) => {
      checkPhone(request.body.phone);
      const { optOut, created } = await addOptOut(app.sql, { userId: request.auth.user.id, phone: request.body.phone, now: new Date() });
      return reply.status(created ? 201 : 200).send(toOptOutRecord(optOut));
    },
  );

  app.delete(
    '/api/v1/opt-outs/:phone',
    {
      schema: {
        tags: ['opt-outs'],
        summary: 'Take a number off the opt-out list (write the + as %2B or as is)',
        params: Type.Object({ phone: Phone }, { additionalProperties: false }),
        response: { 204: Type.Null({ description: 'Removed.' }), ...errors('invalid_phone_number', 'not_found'), ...authErrors },
      },
    },
    async (request, reply) => {
      checkPhone(request.params.phone);
      if (!(await removeOptOut(app.sql, { userId: request.auth.user.id, phone: request.params.phone }))) {
        throw new AppError('not_found', 'This number is not on your opt-out list.');
      }
      return reply.status(204).send(null);
    },
  );
};
export default optOutRoutes;
