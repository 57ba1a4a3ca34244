import { randomBytes } from 'node:crypto';
import { buildApp } from '@smsgw/api';
import { ApiConfigSchema, loadConfig } from '@smsgw/config';
import { createApiKey, createDevice, createUser, type UserRow } from '@smsgw/db';
import { recreateDatabase } from '@smsgw/db/testing';
import { deletePrefix } from '@smsgw/queue';

type FastifyInstance = Awaited<ReturnType<typeof buildApp>>;

export interface BenchApi {
  app: FastifyInstance;
  address: string;
  user: UserRow;
  apiKey: string;
  close(): Promise<void>;
}

/**
 * The API listening on loopback, on a freshly migrated database of its own and a queue prefix of
 * its own, with a user (unlimited quota) that has an API key and one available device.
 */
export async function startBenchApi(database: string): Promise<BenchApi> {
  const databaseUrl = await recreateDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', database);
  const config = loadConfig(ApiConfigSchema, {
    ...process.env,
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: `smsgw-bench-${randomBytes(4).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  const app = await buildApp({ config, logger: false });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const user = await createUser(app.sql, { name: 'bench', monthlyQuota: 1_000_000_000 });
  const { key } = await createApiKey(app.sql, { userId: user.id, name: 'bench' });
  const { device } = await createDevice(app.sql, { userId: user.id, name: 'bench-phone' });
  // Available for DEVICE_AVAILABLE_SECONDS, as if it had just made a request (registration alone never counts).
  await app.sql.query('UPDATE devices SET last_seen_at = now() WHERE id = $1', [device.id]);
  return {
    app,
    address,
    user,
    apiKey: key,
    async close() {
      // Every key of its prefix (queues, counters), so that a benchmark leaves Redis as it found it.
      await deletePrefix(app.redis, config.QUEUE_PREFIX);
      await app.close();
    },
  };
}
