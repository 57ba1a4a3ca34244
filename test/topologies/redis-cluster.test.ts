import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { createWorkerConnection, withKeyPrefix } from '@smsgw/queue';
import { e2ePerTest } from '../support/e2e-fixture.ts';
import { numbers, summarizeLog } from '../faults/support/fixture.ts';
import { expectFailoverGuarantees, failoverUnderLoad } from './support/failover.ts';
import { startTopologyGateway } from './support/gateway.ts';
import { command, startRedisCluster, type RedisCluster } from './support/redis-servers.ts';
import { openUserEvents } from './support/user-events.ts';

/**
 * Issue 28, "Redis Cluster": every queue, script, counter, rate limit, wake-up and live event on a
 * cluster of 3 primaries with a replica each (REDIS_CLUSTER_NODES), all of smsgw's keys in the
 * slot of its hash tag; and the primary of that slot killed under load.
 */
const openE2e = e2ePerTest('topologies');

async function slotOf(redis: RedisCluster, prefix: string): Promise<number> {
  return Number(await command(redis.servers[0]!.port, 'CLUSTER', 'KEYSLOT', `{${prefix}}`));
}

/** Every key on the cluster's primaries now. */
async function keysOf(redis: RedisCluster): Promise<Map<number, string[]>> {
  const keys = new Map<number, string[]>();
  for (const server of redis.servers.filter((s) => s.alive)) {
    const role = String(await command(server.port, 'ROLE'));
    if (role.startsWith('master')) keys.set(server.port, (await command(server.port, 'KEYS', '*')) as string[]);
  }
  return keys;
}

describe('on a Redis Cluster of 3 primaries and 3 replicas', () => {
  it('delivers sends of one API through devices held by another, with live events, every key in the one slot of the hash tag', async () => {
    const e2e = await openE2e();
    const redis = await startRedisCluster();
    e2e.defer(() => redis.stop());
    // Two of the six nodes are enough: the others are discovered.
    const nodes = redis.nodes.split(',').slice(0, 2).join(',');
    // No safety-net poll within the test: the devices claim on wake-ups, which cross Redis pub/sub.
    const gateway = await startTopologyGateway(e2e, { redis: { REDIS_CLUSTER_NODES: nodes }, dispatchers: 1, simEnv: { SIM_POLL_SECONDS: '600' } });
    const otherApi = await gateway.cluster.startOtherApi('api-b');
    const events = await openUserEvents(otherApi, gateway.key);
    e2e.defer(() => events.close());

    // Assigned by the API that took them (and woken through Redis) and by the dispatcher.
    const ids = [...(await gateway.send(numbers(0, 20), { api: otherApi }))];
    for (let i = 0; i < 5; i++) ids.push(...(await gateway.send(numbers(100 + i, 1), { api: otherApi })));
    await gateway.waitForDelivered(ids.length, 15_000);
    const sent = await gateway.sent();
    expect(sent.length).toBe(ids.length);
    expect(new Set(sent)).toEqual(new Set(ids));
    // The dispatchers' and APIs' status events reach the stream of the other API (PUBLISH reaches every node).
    await vi.waitFor(() => expect(new Set(events.delivered())).toEqual(new Set(ids)), { timeout: 10_000, interval: 100 });

    // Every key smsgw made is in the slot of its hash tag, BullMQ's included; nothing outside it.
    const slot = await slotOf(redis, gateway.prefix);
    const primary = await redis.primaryOf(slot);
    const keys = await keysOf(redis);
    expect(keys.get(primary.port)!.length).toBeGreaterThan(0);
    for (const [port, list] of keys) {
      if (port !== primary.port) expect(list, `keys on ${port}`).toEqual([]);
    }
    expect(keys.get(primary.port)!.filter((key) => !key.startsWith(`{${gateway.prefix}}:`))).toEqual([]);
    // The reports' WAIT went to the primary of that slot, where they were written, and nowhere else.
    for (const port of keys.keys()) {
      const waits = /cmdstat_wait:calls=(\d+)/.exec(String(await command(port, 'INFO', 'commandstats')))?.[1] ?? '0';
      if (port === primary.port) expect(Number(waits)).toBeGreaterThan(0);
      else expect(waits, `WAITs on ${port}`).toBe('0');
    }

    for (const name of ['api', 'api-b', 'dispatcher-0']) {
      const log = summarizeLog(gateway.cluster.output(name));
      expect(log.raw, name).toEqual([]);
      expect(log.errors, name).toEqual([]);
    }
  });

  it('connects again while the cluster is down for a failover (as BullMQ reconnects a blocking connection)', async () => {
    const e2e = await openE2e();
    const redis = await startRedisCluster();
    e2e.defer(() => redis.stop());
    const settings = withKeyPrefix({ REDIS_URL: '', REDIS_CLUSTER_NODES: redis.nodes, REDIS_SENTINEL_NAME: 'mymaster', QUEUE_PREFIX: 'reconnect' });
    const connection = createWorkerConnection(settings, { lazyConnect: true });
    connection.on('error', () => undefined);
    e2e.defer(() => connection.disconnect());
    await connection.connect();
    const slot = await slotOf(redis, 'reconnect');
    const primary = await redis.primaryOf(slot);
    await primary.kill();
    const survivor = redis.servers.find((s) => s.alive)!;
    await vi.waitFor(async () => expect(String(await command(survivor.port, 'CLUSTER', 'INFO'))).toContain('cluster_state:fail'), {
      timeout: 10_000,
      interval: 20,
    });

    connection.disconnect();
    const connected = connection.connect().then(() => 'connected');
    await redis.waitForPromotion(slot, primary);
    expect(await Promise.race([connected, sleep(5000, 'still connecting 5 s after the promotion')])).toBe('connected');
    expect(await connection.set(`${settings.QUEUE_PREFIX}:after`, '1')).toBe('OK');
  });

  it('loses nothing and sends nothing twice when the primary of that slot is killed under load', async () => {
    const e2e = await openE2e();
    const redis = await startRedisCluster();
    e2e.defer(() => redis.stop());
    const gateway = await startTopologyGateway(e2e, { redis: { REDIS_CLUSTER_NODES: redis.nodes } });
    const slot = await slotOf(redis, gateway.prefix);
    const primary = await redis.primaryOf(slot);

    const failover = await failoverUnderLoad(
      gateway,
      {
        primaryPort: primary.port,
        reportJobs: `{${gateway.prefix}}:reports:wait`,
        kill: () => primary.kill(),
        waitForPromotion: async () => void (await redis.waitForPromotion(slot, primary)),
      },
      ['dispatcher-0', 'dispatcher-1'],
    );
    await expectFailoverGuarantees(gateway, failover, ['api', 'dispatcher-0', 'dispatcher-1', 'devices']);
  });
});
