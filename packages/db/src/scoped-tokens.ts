import type { Sql } from './sql.ts';

// SMS Gate's tokens (docs/compatibility.md, "Tokens and scopes"): one row per JWT with scopes, an
// access token and its refresh token. Authentication reads the row in its one statement
// (`findUserOfLiveKey`); these write them. Plain SQL on the pg pool, each an atomic statement.

export interface ScopedTokenRow {
  id: string;
  use: 'access' | 'refresh';
  /** A refresh token's access token. */
  parentId: string | null;
  scopes: readonly string[];
  expiresAt: Date;
}

export interface ScopedTokenOwner {
  userId: string;
  apiKeyId: string;
}

/** Stores a new pair: its access token and the refresh token whose parent it is. */
export async function insertScopedTokens(sql: Sql, owner: ScopedTokenOwner, tokens: readonly ScopedTokenRow[]): Promise<void> {
  await sql.query(
    `INSERT INTO scoped_tokens (id, user_id, api_key_id, use, parent_id, scopes, expires_at)
     SELECT t.id, $1, $2, t.use, t.parent_id, t.scopes, t.expires_at
       FROM jsonb_to_recordset($3::jsonb) AS t(id uuid, use text, parent_id uuid, scopes text[], expires_at timestamptz)`,
    [
      owner.userId,
      owner.apiKeyId,
      JSON.stringify(tokens.map((t) => ({ id: t.id, use: t.use, parent_id: t.parentId, scopes: t.scopes, expires_at: t.expiresAt }))),
    ],
  );
}

/**
 * Spends a refresh token: revokes it and the access token it was issued with, and stores the next
 * pair, in one statement. False when the refresh token is not a live refresh token of this user
 * (spent before, revoked, expired, unknown): a replay changes nothing. Of two concurrent refreshes
 * of one token, one wins.
 */
export async function rotateRefreshToken(sql: Sql, options: { userId: string; refreshId: string; next: readonly ScopedTokenRow[] }): Promise<boolean> {
  const { rowCount } = await sql.query(
    `WITH spent AS (
       UPDATE scoped_tokens SET revoked_at = now()
        WHERE id = $1 AND user_id = $2 AND use = 'refresh' AND revoked_at IS NULL AND expires_at > now()
        RETURNING parent_id, api_key_id
     ), parent AS (
       UPDATE scoped_tokens SET revoked_at = now()
        WHERE id = (SELECT parent_id FROM spent) AND revoked_at IS NULL
     ), inserted AS (
       INSERT INTO scoped_tokens (id, user_id, api_key_id, use, parent_id, scopes, expires_at)
       SELECT t.id, $2, spent.api_key_id, t.use, t.parent_id, t.scopes, t.expires_at
         FROM spent, jsonb_to_recordset($3::jsonb) AS t(id uuid, use text, parent_id uuid, scopes text[], expires_at timestamptz)
     )
     SELECT 1 FROM spent`,
    [
      options.refreshId,
      options.userId,
      JSON.stringify(options.next.map((t) => ({ id: t.id, use: t.use, parent_id: t.parentId, scopes: t.scopes, expires_at: t.expiresAt }))),
    ],
  );
  return rowCount === 1;
}

/** Revokes a token of the user by its jti, and the refresh token of an access token (as upstream's `Revoke`). */
export async function revokeScopedToken(sql: Sql, options: { userId: string; id: string }): Promise<void> {
  await sql.query(
    `UPDATE scoped_tokens SET revoked_at = now()
      WHERE (id = $1 OR parent_id = $1) AND user_id = $2 AND revoked_at IS NULL`,
    [options.id, options.userId],
  );
}
