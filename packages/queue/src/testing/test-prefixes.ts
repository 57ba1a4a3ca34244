import { randomBytes } from 'node:crypto';
import { deletePrefix } from '../connection.ts';
import type { RedisClient } from '../topology.ts';

/**
 * Key prefixes for one test file: each test takes one of its own (`next()`), all under a root of
 * the file's, so that `remove()` deletes every key the file made in one scan, TTL or none.
 */
export function testPrefixes(kind: string): { next(): string; remove(redis: RedisClient): Promise<void> } {
  const root = `test-${kind}-${randomBytes(6).toString('hex')}`;
  let count = 0;
  return { next: () => `${root}:${++count}`, remove: (redis) => deletePrefix(redis, root) };
}
