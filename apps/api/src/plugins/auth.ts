import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import fastifyJwt from '@fastify/jwt';
import { AppError, isUuid } from '@smsgw/core';
import { DEVICE_TOKEN_PREFIX, authenticateApiKey, findUser, touchApiKey, type UserRow } from '@smsgw/db';

export interface AuthContext {
  user: UserRow;
  method: 'api_key' | 'jwt';
  /** The API key of the request; null for a JWT. */
  apiKeyId: string | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook of every user endpoint: sets `request.auth` or answers 401. */
    authenticate: (request: FastifyRequest) => Promise<void>;
    issueToken: (auth: AuthContext) => { token: string; expiresAt: Date };
  }
  interface FastifyRequest {
    auth: AuthContext;
  }
}

// Last-used times are written at most this often per key, not on every request.
const TOUCH_INTERVAL_MS = 60_000;

/** The credential of a request: `X-API-Key`, else `Authorization: Bearer`. */
export function readCredential(request: FastifyRequest): string | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey.trim() || undefined;
  const authorization = request.headers.authorization;
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/**
 * A key for rate limiting that never stores the credential itself: `device:` for a device token
 * (limited by DEVICE_RATE_LIMIT_PER_MINUTE), `cred:` for any other credential, else the address.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const credential = readCredential(request);
  if (!credential) return `ip:${request.ip}`;
  const digest = createHash('sha256').update(credential).digest('base64url').slice(0, 22);
  return credential.startsWith(DEVICE_TOKEN_PREFIX) ? `device:${digest}` : `cred:${digest}`;
}

/**
 * Authentication of user endpoints: API keys (as `X-API-Key` or bearer) and HS256 JWTs issued by
 * `POST /api/v1/auth/token`, with the algorithm pinned and `exp` and `sub` required.
 */
export const auth = fp(
  async (app: FastifyInstance) => {
    const { JWT_SECRET, JWT_TTL_SECONDS } = app.config;
    await app.register(fastifyJwt, {
      secret: JWT_SECRET,
      decoratorName: 'jwtPayload',
      sign: { algorithm: 'HS256', expiresIn: `${JWT_TTL_SECONDS}s` },
      verify: { algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] },
    });

    app.decorateRequest('auth', null as unknown as AuthContext);

    app.decorate('authenticate', async (request: FastifyRequest) => {
      const credential = readCredential(request);
      if (!credential) throw new AppError('unauthorized');
      request.auth = await (credential.split('.').length === 3 ? fromJwt(credential) : fromApiKey(credential));
    });

    app.decorate('issueToken', (context: AuthContext) => {
      const expiresAt = new Date(Date.now() + JWT_TTL_SECONDS * 1000);
      const token = app.jwt.sign({ sub: context.user.id });
      return { token, expiresAt };
    });

    async function fromApiKey(secret: string): Promise<AuthContext> {
      const found = await authenticateApiKey(app.db, secret);
      if (!found) throw new AppError('unauthorized');
      const now = new Date();
      if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
        await touchApiKey(app.db, found.keyId, now);
      }
      return { user: found.user, method: 'api_key', apiKeyId: found.keyId };
    }

    async function fromJwt(token: string): Promise<AuthContext> {
      let payload: { sub?: unknown };
      try {
        payload = app.jwt.verify(token);
      } catch {
        throw new AppError('unauthorized');
      }
      const user = typeof payload.sub === 'string' && isUuid(payload.sub) ? await findUser(app.db, payload.sub) : null;
      if (!user) throw new AppError('unauthorized');
      return { user, method: 'jwt', apiKeyId: null };
    }
  },
  { name: 'auth', dependencies: ['resources'] },
);
