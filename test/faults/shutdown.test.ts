import { describe, expect, it } from 'vitest';
import { exitOf, gatewayPerTest, summarizeLog } from './support/fixture.ts';

/** Shutdown (issue 11, item 4): prompt, complete, and exit code 0 (`./pnpmw start`: start.test.ts). */
const startGateway = gatewayPerTest();

describe('shutdown', () => {
  it('the API answers its long polls and ends its event streams at once on SIGTERM, and exits within 5 s', async () => {
    const gateway = await startGateway({ devices: 1 });
    const { baseUrl } = gateway.cluster;
    const headers = { authorization: `Bearer ${gateway.tokens[0]}` };
    const longPoll = fetch(`${baseUrl}/api/v1/device/messages?wait=30`, { headers });
    const stream = await fetch(`${baseUrl}/api/v1/device/events`, { headers });
    const streamEnded = stream.text();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the long poll is waiting

    const api = gateway.cluster.processes.get('api')!;
    const start = Date.now();
    api.kill('SIGTERM');
    const poll = await longPoll;
    expect(poll.status).toBe(200);
    expect(await poll.json()).toEqual({ messages: [] });
    await streamEnded;
    expect(await exitOf(api)).toBe(0);
    expect(Date.now() - start).toBeLessThan(5000);
  });

  it('a dispatcher exits within 15 s of SIGTERM while Redis is down', async () => {
    const gateway = await startGateway({ devices: 1 });
    await gateway.redis.kill();
    await new Promise((resolve) => setTimeout(resolve, 1000)); // its connections notice
    const dispatcher = gateway.cluster.processes.get('dispatcher-0')!;
    const start = Date.now();
    dispatcher.kill('SIGTERM');
    expect(await exitOf(dispatcher)).toBe(0);
    expect(Date.now() - start).toBeLessThan(15_000);
    const log = summarizeLog(gateway.cluster.output('dispatcher-0'));
    expect(log.raw).toEqual([]);
    expect(log.errors).toEqual([]);
  });
});
