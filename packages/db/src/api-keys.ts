import { newId } from '@smsgw/core';
import type { Db } from './client.ts';
import { userColumns, type UserRow } from './users.ts';
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

/** Finds the live key with this secret, and its user (none for a revoked key or a disabled user). */
export async function authenticateApiKey(db: Db, secret: string): Promise<AuthenticatedKey | null> {
  if (!secret.startsWith(API_KEY_PREFIX)) return null;
  const hash = hashSecret(secret);
  const key = await db.apiKey.findUnique({
    where: { hash },
    select: { id: true, hash: true, lastUsedAt: true, revokedAt: true, user: { select: { ...userColumns, disabledAt: true } } },
  });
  // The lookup is by hash; the constant-time comparison guards against an index that matched loosely.
  if (!key || key.revokedAt || key.user.disabledAt || !sameHash(key.hash, hash)) return null;
  const { disabledAt: _disabled, ...user } = key.user;
  return { keyId: key.id, lastUsedAt: key.lastUsedAt, user };
}

/**
 * The user of a JWT, if the API key it was issued to is theirs and not revoked and the user is not
 * disabled: one statement on both primary keys (a revoked key ends the JWTs issued to it).
 */
export async function findUserOfLiveKey(db: Db, options: { userId: string; keyId: string }): Promise<UserRow | null> {
  return db.user.findFirst({
    where: { id: options.userId, disabledAt: null, apiKeys: { some: { id: options.keyId, revokedAt: null } } },
    select: userColumns,
  });
}

export async function touchApiKey(db: Db, keyId: string, at: Date): Promise<void> {
  await db.apiKey.updateMany({ where: { id: keyId }, data: { lastUsedAt: at } });
}
