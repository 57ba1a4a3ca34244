import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../testing/test-api.ts';

/**
 * The rate limit's counts (plugins/rate-counts.ts): well below the limit a send is not held for
 * its count, which rides the send's enqueue on the producer connection; near the limit every
 * request is counted first, so that the 429 comes exactly where it did.
 */
let small: TestApi;
let large: TestApi;
beforeAll(async () => {
  [small, large] = await Promise.all([startTestApi({ RATE_LIMIT_PER_MINUTE: '6' }), startTestApi({ RATE_LIMIT_PER_MINUTE: '1000' })]);
});
afterAll(async () => {
  await Promise.all([small?.close(), large?.close()]);
});

const counted = (api: TestApi, userId: string) => api.app.redis.get(`${api.config.QUEUE_PREFIX}:rate-limit:user:${userId}`);
const sendOne = (api: TestApi, apiKey: string) => send(api.app, apiKey, { recipients: [uniquePhone()], body: 'counted' });

describe('rate-limit counts', () => {
  it('answers the 7th send of a minute 429 under a limit of 6, storing nothing, and Redis holds all 7', async () => {
    const { userId, apiKey } = await createTestUser(small.db);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await sendOne(small, apiKey)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    expect(await small.db.message.count({ where: { userId } })).toBe(6);
    await vi.waitFor(async () => expect(await counted(small, userId)).toBe('7'));
  });

  it('holds no send well below the limit for its count: none goes on the limiter connection, all reach Redis with the enqueues', async () => {
    const { userId, apiKey } = await createTestUser(large.db);
    expect((await sendOne(large, apiKey)).statusCode).toBe(200);
    const limiterCommands = vi.spyOn(large.app.limiterRedis, 'sendCommand');
    try {
      for (let i = 0; i < 10; i++) expect((await sendOne(large, apiKey)).statusCode).toBe(200);
      expect(limiterCommands).not.toHaveBeenCalled();
    } finally {
      limiterCommands.mockRestore();
    }
    await vi.waitFor(async () => expect(await counted(large, userId)).toBe('11'));
  });

  it('sends the counts of requests that make no send (reads) within a moment, on their own', async () => {
    const { userId, apiKey } = await createTestUser(large.db, { devices: 0 });
    const read = () => large.app.inject({ method: 'GET', url: '/api/v1/sms', headers: { 'x-api-key': apiKey } });
    for (let i = 0; i < 5; i++) expect((await read()).statusCode).toBe(200);
    await vi.waitFor(async () => expect(await counted(large, userId)).toBe('5'), { timeout: 1000, interval: 10 });
  });
});
