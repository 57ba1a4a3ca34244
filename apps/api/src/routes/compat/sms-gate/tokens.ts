import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, isUuid, newId } from '@smsgw/core';
import { insertScopedTokens, revokeScopedToken, rotateRefreshToken, type ScopedTokenRow } from '@smsgw/db';
import type { AuthContext } from '../../../plugins/auth.ts';
import { grants, isScope, REFRESH_SCOPE } from '../../../plugins/scopes.ts';
import { smsGateErrors } from './schemas.ts';

const tags = ['sms-gate-client'];
/** Upstream's refresh lifetime (`jwt.refresh_ttl`, 720 h); the access lifetime is JWT_TTL_SECONDS. */
export const REFRESH_TTL_SECONDS = 720 * 3600;

const Optional = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const TokenRequest = Type.Object(
  {
    scopes: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'SMS Gate scopes (docs/http-api.md, "Scopes").' }),
    ttl: Optional(
      Type.Integer({ minimum: 0, description: 'Seconds the access token lives; 0 or absent: the most, JWT_TTL_SECONDS (larger values are taken as it).' }),
    ),
  },
  { $id: 'SmsGateTokenRequest', examples: [{ scopes: ['messages:send', 'messages:read'], ttl: 600 }] },
);

const TokenResponse = Type.Object(
  {
    id: Type.String({ description: "The access token's jti: DELETE /auth/token/{id} revokes it and its refresh token." }),
    token_type: Type.Literal('Bearer'),
    access_token: Type.String(),
    refresh_token: Type.String({ description: 'Single use: POST /auth/token/refresh with it as Bearer.' }),
    expires_at: Type.String({ format: 'date-time', description: 'When the access token expires.' }),
  },
  { $id: 'SmsGateTokenResponse', description: "A JWT pair with scopes, as SMS Gate's `TokenResponse`." },
);

/**
 * SMS Gate's `/auth/token` (upstream `handlers/thirdparty/auth.go`, `jwt/service.go`): a pair of
 * JWTs with scopes, the refresh token single use, revocation by jti. Each token is tied to the API
 * key of the login that made it, and is refused once that key is revoked.
 */
const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/token',
    {
      schema: {
        tags,
        summary: 'Issue an access token with scopes and its refresh token',
        body: TokenRequest,
        response: { 201: TokenResponse, ...smsGateErrors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { scopes, ttl } = request.body;
      const unknown = scopes.find((s) => !isScope(s));
      if (unknown !== undefined) throw new AppError('invalid_request', `unknown scope: ${unknown}`);
      // A scoped token cannot make a token that can do more than itself.
      const held = request.auth.token?.scopes;
      const beyond = held && scopes.filter(isScope).find((s) => !grants(held, s));
      if (beyond) throw new AppError('forbidden', `scope required: ${beyond}`);
      const pair = issuePair(app, request.auth, [...new Set(scopes)], ttl || app.config.JWT_TTL_SECONDS);
      await insertScopedTokens(app.sql, { userId: request.auth.user.id, apiKeyId: request.auth.apiKeyId }, pair.rows);
      return reply.status(201).send(pair.response);
    },
  );

  app.post(
    '/token/refresh',
    {
      schema: {
        tags,
        summary: 'Exchange a refresh token (as Bearer) for a new pair; the old pair is revoked, and a replay is 401',
        response: { 201: TokenResponse, ...smsGateErrors(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const refresh = request.auth.token;
      if (!refresh?.originalScopes?.length || !refresh.scopes.includes(REFRESH_SCOPE)) throw new AppError('unauthorized');
      const pair = issuePair(app, request.auth, refresh.originalScopes, app.config.JWT_TTL_SECONDS);
      if (!(await rotateRefreshToken(app.sql, { userId: request.auth.user.id, refreshId: refresh.id, next: pair.rows }))) throw new AppError('unauthorized');
      app.credentialCache.forgetUser(request.auth.user.id);
      return reply.status(201).send(pair.response);
    },
  );

  app.delete(
    '/token/:jti',
    {
      schema: {
        tags,
        summary: "Revoke a token by its jti (an access token's revokes its refresh token too); 204 also for an unknown jti, as upstream",
        params: Type.Object({ jti: Type.String({ minLength: 1 }) }),
        response: { 204: Type.Null(), ...smsGateErrors(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { jti } = request.params;
      if (isUuid(jti)) {
        await revokeScopedToken(app.sql, { userId: request.auth.user.id, id: jti.toLowerCase() });
        // At once in this process; Postgres tells the others (plugins/credential-cache.ts).
        app.credentialCache.forgetUser(request.auth.user.id);
      }
      return reply.status(204).send(null);
    },
  );
};
export default tokenRoutes;

/** An access token and its refresh token, signed, with their rows; the access token lives `ttlSeconds` at most JWT_TTL_SECONDS. */
function issuePair(app: FastifyInstance, auth: AuthContext, scopes: readonly string[], ttlSeconds: number) {
  const [accessId, refreshId] = [newId(), newId()];
  const base = { sub: auth.user.id, user_id: auth.user.id, key_id: auth.apiKeyId };
  const access = sign(app, { ...base, jti: accessId, scopes }, Math.min(ttlSeconds, app.config.JWT_TTL_SECONDS));
  const refresh = sign(app, { ...base, jti: refreshId, scopes: [REFRESH_SCOPE], original_scopes: scopes }, REFRESH_TTL_SECONDS);
  const rows: ScopedTokenRow[] = [
    { id: accessId, use: 'access', parentId: null, scopes, expiresAt: access.expiresAt },
    { id: refreshId, use: 'refresh', parentId: accessId, scopes, expiresAt: refresh.expiresAt },
  ];
  const response = {
    id: accessId,
    token_type: 'Bearer' as const,
    access_token: access.token,
    refresh_token: refresh.token,
    expires_at: access.expiresAt.toISOString(),
  };
  return { rows, response };
}

function sign(app: FastifyInstance, claims: Record<string, unknown>, seconds: number): { token: string; expiresAt: Date } {
  const token = app.jwt.sign(claims, { expiresIn: `${seconds}s` });
  const { exp } = app.jwt.decode<{ exp: number }>(token)!;
  return { token, expiresAt: new Date(exp * 1000) };
}
