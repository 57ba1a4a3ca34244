import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, MAX_BODY_CODE_POINTS, isUuid, templateVariables } from '@smsgw/core';
import { assertSendableText, createTemplate, deleteTemplate, findTemplate, listTemplates, updateTemplate, type TemplateRow } from '@smsgw/db';
import { IdParams, PageOf, Pagination, Timestamp, authErrors, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const TemplateRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    body: Type.String(),
    variables: Type.Object({
      reserved: Type.Array(Type.String(), { description: 'name and phone, filled per recipient.' }),
      custom: Type.Array(Type.String(), { description: 'To be given in `variables` of a send-template request.' }),
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Template', description: 'A message template; {{name}} and {{phone}} are filled per recipient.' },
);
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Body = Type.String({ minLength: 1, maxLength: MAX_BODY_CODE_POINTS, description: 'Text with {{name}}, {{phone}} and custom {{placeholders}}.' });

function toRecord(t: TemplateRow) {
  const { reserved, custom } = templateVariables(t.body);
  return {
    id: t.id,
    name: t.name,
    body: t.body,
    variables: { reserved, custom },
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

/** A placeholder whose name does not match the pattern is refused when the template is saved. */
function checkBody(body: string | undefined): void {
  if (body === undefined) return;
  assertSendableText(body, 'body');
  const [invalid] = templateVariables(body).invalid;
  if (invalid !== undefined) {
    throw new AppError('invalid_request', `Invalid placeholder ${invalid}: a name matches [A-Za-z_][A-Za-z0-9_]*, as in {{first_name}}.`);
  }
}

/** `/api/v1/templates`: saved texts for `POST /api/sms/send-template`. */
const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.post(
    '/api/v1/templates',
    {
      schema: {
        tags: ['templates'],
        summary: 'Create a template',
        body: Type.Object(
          { name: Name, body: Body },
          { additionalProperties: false, examples: [{ name: 'Login code', body: 'Hi {{name}}, your code is {{code}}.' }] },
        ),
        response: { 201: TemplateRecord, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request, reply) => {
      checkBody(request.body.body);
      return reply.status(201).send(toRecord(await createTemplate(app.sql, { userId: request.auth.user.id, ...request.body })));
    },
  );

  app.get(
    '/api/v1/templates',
    {
      schema: {
        tags: ['templates'],
        summary: 'List templates, newest first',
        querystring: Pagination,
        response: { 200: PageOf(TemplateRecord, 'TemplatePage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listTemplates(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(toRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/templates/:id',
    { schema: { tags: ['templates'], summary: 'Get a template', params: IdParams, response: { 200: TemplateRecord, ...errors('not_found'), ...authErrors } } },
    async (request) => {
      const { id } = request.params;
      const template = isUuid(id) ? await findTemplate(app.sql, { userId: request.auth.user.id, id }) : null;
      if (!template) throw new AppError('not_found', 'Template not found');
      return toRecord(template);
    },
  );

  app.patch(
    '/api/v1/templates/:id',
    {
      schema: {
        tags: ['templates'],
        summary: 'Change a template',
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(Name), body: Type.Optional(Body) },
          { additionalProperties: false, minProperties: 1, examples: [{ body: 'Hello {{name}}, your code is {{code}}.' }] },
        ),
        response: { 200: TemplateRecord, ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      checkBody(request.body.body);
      const template = isUuid(id) ? await updateTemplate(app.sql, { userId: request.auth.user.id, id, ...request.body }) : null;
      if (!template) throw new AppError('not_found', 'Template not found');
      return toRecord(template);
    },
  );

  app.delete(
    '/api/v1/templates/:id',
    { schema: { tags: ['templates'], summary: 'Delete a template', params: IdParams, response: { 204: Type.Null(), ...errors('not_found'), ...authErrors } } },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteTemplate(app.sql, { userId: request.auth.user.id, id }))) throw new AppError('not_found', 'Template not found');
      return reply.status(204).send(null);
    },
  );
};
export default templateRoutes;
