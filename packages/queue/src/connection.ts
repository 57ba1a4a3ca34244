import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections. Producers fail fast when Redis is away (the message rows are the outbox, so
 * nothing is lost); workers retry forever, as BullMQ requires.
 */
export function createProducerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, ...options });
}

export function createWorkerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, ...options });
}

/** Removes every key under a prefix (queues, job schedulers, cursors): for tests and benchmarks. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/** Why a process cannot start on this Redis, in one line that names REDIS_URL; or null when it answers. */
export async function redisProblem(url: string, timeoutMs = 5000): Promise<string | null> {
  let where = 'REDIS_URL';
  try {
    const parsed = new URL(url);
    where = `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return `REDIS_URL is not a URL (redis://host:port).`;
  }
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let last: Error | undefined;
  client.on('error', (error: Error) => (last = error));
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    const reason = (last ?? (error as Error)).message;
    return `Cannot reach Redis at ${where} (REDIS_URL): ${reason}. Is it running?`;
  } finally {
    client.disconnect();
  }
}
