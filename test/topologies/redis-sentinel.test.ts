import { describe, it } from 'vitest';
import { e2ePerTest } from '../support/e2e-fixture.ts';
import { expectFailoverGuarantees, failoverUnderLoad } from './support/failover.ts';
import { startTopologyGateway } from './support/gateway.ts';
import { startRedisSentinels } from './support/redis-servers.ts';

/**
 * Issue 28, "Sentinel": Redis found through 3 Sentinels (REDIS_SENTINELS, REDIS_SENTINEL_NAME), its
 * primary's host dying under load and the replica promoted. The replica is 200 ms behind (another
 * zone), so that the reports the primary took in its last 200 ms are lost with it unless the API
 * waited for the replica before answering them (REDIS_WAIT_REPLICAS).
 */
const openE2e = e2ePerTest('topologies');

describe('on Redis behind Sentinel', () => {
  it('loses nothing and sends nothing twice when the primary dies under load and its replica is promoted', async () => {
    const e2e = await openE2e();
    const redis = await startRedisSentinels({ replicationDelayMs: 200 });
    e2e.defer(() => redis.stop());
    const gateway = await startTopologyGateway(e2e, { redis: { REDIS_SENTINELS: redis.sentinels, REDIS_SENTINEL_NAME: redis.name } });

    const failover = await failoverUnderLoad(
      gateway,
      {
        primaryPort: redis.primary.port,
        reportJobs: `${gateway.prefix}:reports:wait`,
        kill: () => redis.crashPrimary(),
        waitForPromotion: async () => void (await redis.waitForFailover(redis.primary)),
      },
      ['dispatcher-0', 'dispatcher-1'],
    );
    await expectFailoverGuarantees(gateway, failover, ['api', 'dispatcher-0', 'dispatcher-1', 'devices']);
  });
});
