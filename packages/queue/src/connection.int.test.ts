import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducerConnection, onRedisError, redisProblem } from './connection.ts';

/**
 * How connections are made and watched. One Redis server (REDIS_URL) with REDIS_USERNAME and REDIS_PASSWORD: the user of a URL that names
 * none, the password of one that carries none (a secret kept apart from the URL). An ACL user of
 * the test's own, with a password that needs escaping in a URL, is added to the local Redis and
 * removed afterwards. And the errors a connection reports, a cluster's nodes' included.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const admin = new Redis(REDIS_URL);
const user = `smsgw-test-${randomBytes(4).toString('hex')}`;
const password = `p@ss:/%${randomBytes(4).toString('hex')}`;
const settings = { REDIS_URL, REDIS_SENTINEL_NAME: 'mymaster', QUEUE_PREFIX: user };

beforeAll(async () => {
  await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '+@all', '~*', '&*');
});
afterAll(async () => {
  await admin.call('ACL', 'DELUSER', user);
  admin.disconnect();
});

async function whoami(env: Partial<typeof settings> & { REDIS_USERNAME?: string; REDIS_PASSWORD?: string }): Promise<unknown> {
  const client = createProducerConnection({ ...settings, ...env }, { lazyConnect: true });
  try {
    await client.connect();
    return await client.call('ACL', 'WHOAMI');
  } finally {
    client.disconnect();
  }
}

describe('a Redis server with a user and password of its own variables', () => {
  it('authenticates as REDIS_USERNAME with REDIS_PASSWORD, the URL naming neither', async () => {
    expect(await whoami({ REDIS_USERNAME: user, REDIS_PASSWORD: password })).toBe(user);
  });

  it('takes the user from REDIS_URL and the password from REDIS_PASSWORD', async () => {
    const url = new URL(REDIS_URL);
    url.username = user;
    expect(await whoami({ REDIS_URL: url.toString(), REDIS_PASSWORD: password })).toBe(user);
  });

  it('says at start-up that the server refused the credentials, and which variables hold them', async () => {
    const problem = await redisProblem({ ...settings, REDIS_USERNAME: user, REDIS_PASSWORD: 'wrong' });
    expect(problem).toMatch(
      /^Redis at 127\.0\.0\.1:6379 refused smsgw's credentials: WRONGPASS .*Check the user and password in REDIS_URL, or REDIS_USERNAME and REDIS_PASSWORD\.$/,
    );
    expect(await redisProblem({ ...settings, REDIS_USERNAME: user, REDIS_PASSWORD: password })).toBeNull();
  });
});

describe('onRedisError', () => {
  it("reports a connection's errors, and on a cluster each node's own with its address", () => {
    const reported: string[] = [];
    const report = (what: string, error: Error) => void reported.push(`${what}: ${error.message}`);
    const server = createProducerConnection(settings, { lazyConnect: true });
    const cluster = createProducerConnection({ ...settings, REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, { lazyConnect: true });
    onRedisError(server, 'Redis connection failed', report);
    onRedisError(cluster, 'Redis connection failed', report);
    server.emit('error', new Error('ECONNREFUSED'));
    cluster.emit('error', new Error('Failed to refresh slots cache'));
    cluster.emit('node error', new Error('WRONGPASS invalid username-password pair'), '127.0.0.1:7001');
    expect(reported).toEqual([
      'Redis connection failed: ECONNREFUSED',
      'Redis connection failed: Failed to refresh slots cache',
      'Redis connection failed: node 127.0.0.1:7001: WRONGPASS invalid username-password pair',
    ]);
    server.disconnect();
    cluster.disconnect();
  });
});
