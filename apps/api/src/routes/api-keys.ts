import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid } from '@smsgw/core';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '@smsgw/db';
import { authErrors, IdParams, NullableTimestamp, Timestamp } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const ApiKeyRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key.' }),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'ApiKey', description: 'An API key (the key itself is shown only when it is created).' },
);

function toRecord(key: ApiKeyRow) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

/** `/api/v1/api-keys`: create (the key is shown once), list, revoke. */
const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.post(
    '/api/v1/api-keys',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'Create an API key (shown once)',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false, examples: [{ name: 'web console' }] }),
        response: {
          201: Type.Intersect([ApiKeyRecord, Type.Object({ key: Type.String({ description: 'The key (smsgw_sk_…), shown once.' }) })], {
            $id: 'NewApiKey',
            description: 'The API key, with the key itself.',
          }),
          ...errors('invalid_request'),
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { key, record } = await createApiKey(app.sql, { userId: request.auth.user.id, name: request.body.name });
      return reply.status(201).send({ ...toRecord(record), key });
    },
  );

  app.get(
    '/api/v1/api-keys',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'List API keys',
        response: {
          200: Type.Object({ data: Type.Array(ApiKeyRecord) }, { $id: 'ApiKeyList', description: 'All your API keys, revoked ones included.' }),
          ...authErrors,
        },
      },
    },
    async (request) => ({ data: (await listApiKeys(app.sql, request.auth.user.id)).map(toRecord) }),
  );

  app.delete(
    '/api/v1/api-keys/:id',
    { schema: { tags: ['api-keys'], summary: 'Revoke an API key', params: IdParams, response: { 204: Type.Null(), ...errors('not_found'), ...authErrors } } },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await revokeApiKey(app.sql, { userId: request.auth.user.id, id }))) {
        throw new AppError('not_found', 'API key not found');
      }
      // At once in this process; Postgres tells the others (plugins/credential-cache.ts).
      app.credentialCache.forgetUser(request.auth.user.id);
      return reply.status(204).send(null);
    },
  );
};
export default apiKeyRoutes;
