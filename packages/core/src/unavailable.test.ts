import { describe, expect, it } from 'vitest';
import { isUnavailable } from './unavailable.ts';

describe('isUnavailable', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['Postgres starting up (57P03)', Object.assign(new Error('the database system is not yet accepting connections'), { code: '57P03' })],
    ['Postgres shutting down (57P01)', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a connection exception (class 08)', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['a connection ended without a code', new Error('Connection terminated unexpectedly')],
    ['Prisma cannot reach the database', Object.assign(new Error("Can't reach database server"), { code: 'P1001' })],
    ['Prisma pool timeout', Object.assign(new Error('Timed out fetching a new connection'), { code: 'P2024' })],
    ['a driver adapter error wrapping 57P03', Object.assign(new Error('adapter error'), { cause: { originalCode: '57P03', message: 'x' } })],
    ['a cause two levels down', new Error('outer', { cause: new Error('middle', { cause: Object.assign(new Error('inner'), { code: 'ECONNRESET' }) }) })],
    [
      'Prisma quoting 57P03 in a raw query error',
      Object.assign(new Error('Raw query failed. Code: `57P03`. Message: `the database system is shutting down`'), { code: 'P2010' }),
    ],
    ['Prisma quoting a class 08 code', Object.assign(new Error('Database error. Code: `08006`. Message: `x`'), { code: 'P2010' })],
    ['Prisma with the code in meta', Object.assign(new Error('Raw query failed'), { code: 'P2010', meta: { code: '57P01' } })],
    ['Postgres shutting down, by its message only', new Error('the database system is shutting down')],
    ['a pooled pg client whose connection broke', new Error('Client has encountered a connection error and is not queryable')],
    ['a Redis command that timed out (REDIS_COMMAND_TIMEOUT_MS)', new Error('Command timed out')],
    ['ioredis refusing commands while disconnected', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    [
      'ioredis losing the connection with a command on it',
      new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'),
    ],
    ['a cluster slot without a primary', new Error('CLUSTERDOWN The cluster is down')],
    ['ioredis giving up while the slots move', new Error('Too many Cluster redirections. Last error: Error: Connection is closed.')],
    ['ioredis giving up on CLUSTERDOWN', new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down')],
    ["ioredis's Cluster reconnecting", new Error("Cluster isn't ready and enableOfflineQueue options is false")],
    ['a slot migrating (TRYAGAIN)', new Error('TRYAGAIN Multiple keys request during rehashing of slot')],
    ['ioredis finding no node', new Error('Failed to refresh slots cache.')],
    ['a demoted primary refusing writes', new Error("READONLY You can't write against a read only replica.")],
    ['a replica still loading', new Error('LOADING Redis is loading the dataset in memory')],
    ['the Sentinels away', new Error('All sentinels are unreachable. Retrying from scratch after 10ms.')],
    ['a Redis that wants a password it was not given', new Error('NOAUTH Authentication required.')],
    ['a Redis whose password was rotated', new Error('WRONGPASS invalid username-password pair or user is disabled.')],
  ])('is true for %s', (_, error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['Prisma quoting a unique violation', Object.assign(new Error('Raw query failed. Code: `23505`. Message: `duplicate key`'), { code: 'P2010' })],
    ['a plain error', new Error('boom')],
    ['keys of a script in several slots (a bug, not an outage)', new Error("CROSSSLOT Keys in request don't hash to the same slot")],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('is false for %s', (_, error) => {
    expect(isUnavailable(error)).toBe(false);
  });
});
