import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '@smsgw/core';
import { authErrors, Timestamp } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const TokenResponse = Type.Object(
  {
    token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_at: Timestamp,
    expires_in: Type.Integer({ description: 'Seconds.' }),
  },
  { $id: 'Token', description: 'A JWT, to send as `Authorization: Bearer`.' },
);

/** `POST /api/v1/auth/token`: exchanges an API key for a short-lived JWT. */
const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/v1/auth/token',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['auth'],
        summary: 'Exchange an API key for a JWT',
        response: { 200: TokenResponse, ...errors('forbidden'), ...authErrors },
      },
    },
    async (request) => {
      if (request.auth.method !== 'api_key') {
        throw new AppError('forbidden', 'A JWT can only be obtained with an API key.');
      }
      const { token, expiresAt } = app.issueToken(request.auth);
      return {
        token,
        token_type: 'Bearer' as const,
        expires_at: expiresAt.toISOString(),
        expires_in: app.config.JWT_TTL_SECONDS,
      };
    },
  );
};
export default authRoutes;
