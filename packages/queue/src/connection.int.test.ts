import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducerConnection, redisProblem } from './connection.ts';

/**
 * One Redis server (REDIS_URL) with REDIS_USERNAME and REDIS_PASSWORD: the user of a URL that names
 * none, the password of one that carries none (a secret kept apart from the URL). An ACL user of
 * the test's own, with a password that needs escaping in a URL, is added to the local Redis and
 * removed afterwards.
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
