import { newId } from '@smsgw/core';
import type { Sql, SqlPool } from './sql.ts';
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

const KEY_COLUMNS = 'id, user_id AS "userId", name, prefix, created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"';

/** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
export async function createApiKey(sql: SqlPool, options: { userId: string; name: string }): Promise<{ key: string; record: ApiKeyRow }> {
  const key = generateSecret(API_KEY_PREFIX);
  const { rows } = await sql.query<ApiKeyRow>(`INSERT INTO api_keys (id, user_id, name, prefix, hash) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}`, [
    newId(),
    options.userId,
    options.name,
    displayPrefix(key),
    hashSecret(key),
  ]);
  return { key, record: rows[0]! };
}

export async function listApiKeys(sql: SqlPool, userId: string): Promise<ApiKeyRow[]> {
  const { rows } = await sql.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC`, [userId]);
  return rows;
}

/** Revokes a key of the user; false when the user has no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(sql: SqlPool, options: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3) WHERE id = $1 AND user_id = $2', [
    options.id,
    options.userId,
    new Date(),
  ]);
  return rowCount === 1;
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
