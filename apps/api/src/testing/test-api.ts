import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { ApiConfigSchema, loadConfig, type ApiConfig } from '@smsgw/config';
import { createApiKey, createDevice, createUser, type Db, type Sql, type UserRow } from '@smsgw/db';
import { createTestDatabase } from '@smsgw/db/testing';
import type { DispatchQueue } from '@smsgw/queue';
import { buildApp } from '../app.ts';

export interface TestApi {
  app: FastifyInstance;
  db: Db;
  sql: Sql;
  queue: DispatchQueue;
  config: ApiConfig;
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * The API on a database of its own (cloned from the migrated template) and a random queue prefix,
 * for `app.inject()`. `close()` obliterates the queue and drops the database.
 */
export async function startTestApi(env: Record<string, string> = {}): Promise<TestApi> {
  const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  const config = loadConfig(ApiConfigSchema, {
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `smsgw-test-${randomBytes(6).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = await buildApp({ config, logger: false });
  return {
    app,
    db: app.db,
    sql: app.sql,
    queue: app.dispatchQueue,
    config,
    databaseUrl: database.url,
    async close() {
      await deleteKeys(app.redis, config.QUEUE_PREFIX);
      await app.close();
      await database.drop();
    },
  };
}

/** Removes every Redis key of a test's prefix (queues, schedulers, cursors). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

export interface TestUser {
  user: UserRow;
  apiKey: string;
  deviceId: string | undefined;
}

/** A user with an API key and, unless `devices: 0`, one available device. Names are random. */
export async function createTestUser(
  db: Db,
  options: { monthlyQuota?: number | null; devices?: number } = {},
): Promise<TestUser> {
  const user = await createUser(db, { name: `user-${randomBytes(4).toString('hex')}`, monthlyQuota: options.monthlyQuota ?? null });
  const { key } = await createApiKey(db, { userId: user.id, name: 'test' });
  let deviceId: string | undefined;
  for (let i = 0; i < (options.devices ?? 1); i++) {
    const { device } = await createDevice(db, { userId: user.id, name: `phone-${i}` });
    deviceId ??= device.id;
  }
  return { user, apiKey: key, deviceId };
}

/** `POST /api/sms/send` through inject. */
export function send(app: FastifyInstance, apiKey: string, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/sms/send', headers: { 'x-api-key': apiKey, ...headers }, payload: body as object });
}
