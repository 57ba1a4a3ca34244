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
