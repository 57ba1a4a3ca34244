import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { ApiConfigSchema, loadConfig, type ApiConfig } from '@smsgw/config';
import { createApiKey, createDevice, createUser, type Db, type Sql, type UserRow } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { createTestDatabase } from '@smsgw/db/testing';
import { deletePrefix, type DispatchQueue } from '@smsgw/queue';
import { buildApp, type BuildAppOptions } from '../app.ts';

export interface TestApi {
  app: FastifyInstance;
  /** Prisma on the test's database, for the tests' own reads and writes (the API itself runs on `sql`). */
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
export async function startTestApi(env: Record<string, string> = {}, options: Pick<BuildAppOptions, 'webhookResolver' | 'logger'> = {}): Promise<TestApi> {
  const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  const config = loadConfig(ApiConfigSchema, {
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `smsgw-test-${randomBytes(6).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    // Every injected request comes from one address: the tests that prove the throttle set their own limit.
    AUTH_FAILURES_PER_MINUTE: '100000',
    // A send leaves its messages pending, for the dispatcher (as a send that cannot assign does): the
    // tests that prove the assignment in the send set their own.
    SEND_ASSIGN_MIN_RECIPIENTS: '0',
    ...env,
  });
  const app = await buildApp({ config, logger: false, ...options });
  const db = createDb({ url: database.url, poolSize: 2 });
  return {
    app,
    db,
    sql: app.sql,
    queue: app.dispatchQueue,
    config,
    databaseUrl: database.url,
    async close() {
      await deletePrefix(app.redis, config.QUEUE_PREFIX);
      await app.close();
      await db.$disconnect();
      await database.drop();
    },
  };
}

export interface TestDevice {
  id: string;
  token: string;
}

export interface TestUser {
  user: UserRow;
  userId: string;
  apiKey: string;
  /** The first device, if any. */
  deviceId: string | undefined;
  devices: TestDevice[];
}

/**
 * A user with an API key and, unless `devices: 0`, one available device (registered, and seen as
 * if it had just made a request: registration alone never makes a device available). Names are random.
 */
export async function createTestUser(db: Db, options: { monthlyQuota?: number | null; devices?: number } = {}): Promise<TestUser> {
  const user = await createUser(db, { name: `user-${randomBytes(4).toString('hex')}`, monthlyQuota: options.monthlyQuota ?? null });
  const { key } = await createApiKey(db, { userId: user.id, name: 'test' });
  const devices: TestDevice[] = [];
  for (let i = 0; i < (options.devices ?? 1); i++) {
    const { device, token } = await createDevice(db, { userId: user.id, name: `phone-${i}` });
    await db.device.update({ where: { id: device.id }, data: { lastSeenAt: new Date() } });
    devices.push({ id: device.id, token });
  }
  return { user, userId: user.id, apiKey: key, deviceId: devices[0]?.id, devices };
}

// A random run prefix and a counter: distinct numbers across the test files of one run.
const phoneRun = String(100 + (randomBytes(2).readUInt16BE(0) % 900));
let phoneSeq = 0;

/** A distinct valid E.164 number on every call. */
export function uniquePhone(): string {
  return `+1${phoneRun}${String(++phoneSeq).padStart(7, '0')}`;
}

/** Jobs of every state in a queue. */
export async function countJobs(queue: DispatchQueue): Promise<number> {
  const counts = await queue.getJobCounts();
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** `POST /api/sms/send` through inject. */
export function send(app: FastifyInstance, apiKey: string, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/sms/send', headers: { 'x-api-key': apiKey, ...headers }, payload: body as object });
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A request with the caller's API key through inject. */
export function call(app: FastifyInstance, apiKey: string, method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method,
    url,
    headers: { 'x-api-key': apiKey, ...headers },
    ...(payload !== undefined && { payload: payload as string | object }),
  });
}

/** What a send can change: the user's messages, batches and quota usage, and the jobs of the queue. */
export async function sendFootprint(api: TestApi, userId: string) {
  const [messages, batches, quota, jobs] = await Promise.all([
    api.db.message.count({ where: { userId } }),
    api.db.batch.count({ where: { userId } }),
    api.db.quotaUsage.aggregate({ where: { userId }, _sum: { used: true } }),
    countJobs(api.queue),
  ]);
  return { messages, batches, quotaUsed: quota._sum.used ?? 0, jobs };
}
