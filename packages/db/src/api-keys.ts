import { newId } from '@smsgw/core';
import type { Db } from './client.ts';
import type { Sql } from './sql.ts';
import type { UserRow } from './users.ts';
import { API_KEY_PREFIX, displayPrefix, generateSecret, hashSecret, sameHash } from './secrets.ts';

export interface ApiKeyRow {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const keyColumns = {
  id: true, userId: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true,
} as const;

/** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
export async function createApiKey(db: Db, options: { userId: string; name: string }): Promise<{ key: string; record: ApiKeyRow }> {
  const key = generateSecret(API_KEY_PREFIX);
  const record = await db.apiKey.create({
    data: { id: newId(), userId: options.userId, name: options.name, prefix: displayPrefix(key), hash: hashSecret(key) },
    select: keyColumns,
  });
  return { key, record };
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKeyRow[]> {
  return db.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: keyColumns });
}

/** Revokes a key of the user; false when the user has no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, options: { userId: string; id: string }): Promise<boolean> {
  const key = await db.apiKey.findFirst({ where: { id: options.id, userId: options.userId }, select: { revokedAt: true } });
  if (!key) return false;
  if (!key.revokedAt) {
    await db.apiKey.updateMany({ where: { id: options.id, userId: options.userId, revokedAt: null }, data: { revokedAt: new Date() } });
  }
  return true;
}

export interface AuthenticatedKey {
  keyId: string;
  lastUsedAt: Date | null;
  user: UserRow;
}

// Authentication runs on every request: plain SQL on the pg pool, one statement each, not Prisma
// (decisions.md, "Where do the hot paths talk to Postgres?").

/** Finds the live key with this secret, and its user (none for a revoked key or a disabled user). */
export async function authenticateApiKey(sql: Sql, secret: string): Promise<AuthenticatedKey | null> {
  if (!secret.startsWith(API_KEY_PREFIX)) return null;
  const hash = hashSecret(secret);
  const { rows } = await sql.query<{ id: string; hash: Buffer; last_used_at: Date | null; user_id: string; name: string; monthly_quota: number | null }>(
    `SELECT k.id, k.hash, k.last_used_at, u.id AS user_id, u.name, u.monthly_quota
       FROM api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.hash = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL`,
    [hash],
  );
  const key = rows[0];
  // The lookup is by hash; the constant-time comparison guards against an index that matched loosely.
  if (!key || !sameHash(key.hash, hash)) return null;
  return { keyId: key.id, lastUsedAt: key.last_used_at, user: { id: key.user_id, name: key.name, monthlyQuota: key.monthly_quota } };
}

/**
 * The user of a JWT, if the API key it was issued to is theirs and not revoked and the user is not
 * disabled: one statement on both primary keys (a revoked key ends the JWTs issued to it). A JWT
 * with a `jti` (SMS Gate's scoped tokens) must also be on record for that key and not revoked:
 * revocation costs no statement of its own.
 */
export async function findUserOfLiveKey(sql: Sql, options: { userId: string; keyId: string; tokenId?: string }): Promise<UserRow | null> {
  const { rows } = await sql.query<UserRow>(
    `SELECT u.id, u.name, u.monthly_quota AS "monthlyQuota"
       FROM users u JOIN api_keys k ON k.user_id = u.id
      WHERE u.id = $1 AND k.id = $2 AND k.revoked_at IS NULL AND u.disabled_at IS NULL
        AND ($3::uuid IS NULL OR EXISTS (
              SELECT 1 FROM scoped_tokens t
               WHERE t.id = $3 AND t.api_key_id = k.id AND t.revoked_at IS NULL AND t.expires_at > now()))`,
    [options.userId, options.keyId, options.tokenId ?? null],
  );
  return rows[0] ?? null;
}

export async function touchApiKey(sql: Sql, keyId: string, at: Date): Promise<void> {
  await sql.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [keyId, at]);
}
