import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import fastifyJwt from '@fastify/jwt';
import { AppError, isUuid } from '@smsgw/core';
import { authenticateApiKey, findUserOfLiveKey, touchApiKey, type UserRow } from '@smsgw/db';
import { authFailures } from './auth-failures.ts';
import { credentialCache, credentialKey } from './credential-cache.ts';
import { ALL_SCOPES, grants, routeScope } from './scopes.ts';

export interface AuthContext {
  user: UserRow;
  method: 'api_key' | 'jwt';
  /** The API key of the request, or the one that the request's JWT was issued to. */
  apiKeyId: string;
  /** A JWT with scopes (SMS Gate's tokens, plugins/scopes.ts): its jti and claims. Absent: every scope. */
  token?: ScopedClaims;
}

export interface ScopedClaims {
  id: string;
  scopes: readonly string[];
  /** A refresh token's: the scopes of the pair it renews. */
  originalScopes?: readonly string[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook of every user endpoint: sets `request.auth` or answers 401 (429 after too many refusals). */
    authenticate: (request: FastifyRequest) => Promise<void>;
    issueToken: (auth: AuthContext) => { token: string; expiresAt: Date };
    /** The user of an API key or JWT, or null when it is refused (no refusal counted: see `verifyCredential`). */
    resolveCredential: (credential: string) => Promise<AuthContext | null>;
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
 * Authentication of user endpoints: API keys (as `X-API-Key` or bearer) and HS256 JWTs issued by
 * `POST /api/v1/auth/token`, with the algorithm pinned and `exp`, `sub` and `key_id` required. A
 * JWT is only as good as the API key it was issued to: revoking the key ends its JWTs (a JWT
 * without `key_id`, issued before the claim existed, is refused). A JWT with `scopes` (SMS Gate's
 * tokens) needs its `jti` on record and not revoked, checked in the same one statement, and may
 * call only the routes its scopes grant (403 `scope required: <scope>`, before the body is read).
 * What a credential stands for is cached in the process (plugins/credential-cache.ts): a known key
 * or JWT costs no statement, and a change made anywhere reaches every process within a second.
 */
export const auth = fp(
  async (app: FastifyInstance) => {
    const { JWT_SECRET, JWT_TTL_SECONDS } = app.config;
    await app.register(authFailures);
    await app.register(credentialCache);
    const cache = app.credentialCache;
    await app.register(fastifyJwt, {
      secret: JWT_SECRET,
      decoratorName: 'jwtPayload',
      sign: { algorithm: 'HS256', expiresIn: `${JWT_TTL_SECONDS}s` },
      verify: { algorithms: ['HS256'], requiredClaims: ['exp', 'sub', 'key_id'] },
    });

    app.decorateRequest('auth', null as unknown as AuthContext);

    // Every credential without scopes holds `all:any`, which grants every route but the refresh.
    app.addHook('preParsing', async (request) => {
      if (!request.auth) return;
      const need = routeScope(request.method, request.routeOptions.url);
      if (!grants(request.auth.token?.scopes ?? [ALL_SCOPES], need)) throw new AppError('forbidden', `scope required: ${need === 'login' ? ALL_SCOPES : need}`);
    });

    app.decorate('authenticate', async (request: FastifyRequest) => {
      request.auth = await app.verifyCredential(request, async () => {
        const credential = readCredential(request);
        return credential ? resolveCredential(credential) : null;
      });
    });

    const resolveCredential = (credential: string) => (credential.split('.').length === 3 ? fromJwt(credential) : fromApiKey(credential));
    app.decorate('resolveCredential', resolveCredential);

    app.decorate('issueToken', (context: AuthContext) => {
      const expiresAt = new Date(Date.now() + JWT_TTL_SECONDS * 1000);
      const token = app.jwt.sign({ sub: context.user.id, key_id: context.apiKeyId });
      return { token, expiresAt };
    });

    async function fromApiKey(secret: string): Promise<AuthContext | null> {
      const key = credentialKey('key', secret);
      const found = await cache.get(
        key,
        () => authenticateApiKey(app.sql, secret),
        (k) => k.user.id,
      );
      if (!found) return null;
      const now = new Date();
      if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
        // On the cached entry too, so that it is not touched again within the interval.
        found.lastUsedAt = now;
        await touchApiKey(app.sql, found.keyId, now);
      }
      return { user: found.user, method: 'api_key', apiKeyId: found.keyId };
    }

    async function fromJwt(token: string): Promise<AuthContext | null> {
      let payload: { sub?: unknown; key_id?: unknown; jti?: unknown; scopes?: unknown; original_scopes?: unknown };
      try {
        payload = app.jwt.verify(token);
      } catch {
        return null;
      }
      const { sub, key_id: keyId } = payload;
      if (typeof sub !== 'string' || !isUuid(sub) || typeof keyId !== 'string' || !isUuid(keyId)) return null;
      const scoped = payload.scopes === undefined ? undefined : scopedClaims(payload);
      if (scoped === null) return null;
      // The signature and `exp` are checked on every request above; the rows behind the claims are cached.
      const key = `jwt:${sub}:${keyId}:${scoped?.id ?? ''}`;
      const user = await cache.get(
        key,
        () => findUserOfLiveKey(app.sql, { userId: sub, keyId, ...(scoped && { tokenId: scoped.id }) }),
        (u) => u.id,
      );
      return user && { user, method: 'jwt', apiKeyId: keyId, ...(scoped && { token: scoped }) };
    }
  },
  { name: 'auth', dependencies: ['resources'] },
);

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** A scoped JWT's claims, or null when they are malformed (the token is refused). */
function scopedClaims(payload: { jti?: unknown; scopes?: unknown; original_scopes?: unknown }): ScopedClaims | null {
  const { jti, scopes, original_scopes: originalScopes } = payload;
  if (typeof jti !== 'string' || !isUuid(jti) || !isStrings(scopes)) return null;
  if (originalScopes !== undefined && !isStrings(originalScopes)) return null;
  return { id: jti.toLowerCase(), scopes, ...(originalScopes && { originalScopes }) };
}
