import { describe, expect, it } from 'vitest';
import { runBundle } from '../support/cluster.ts';
import { e2ePerTest, type E2e } from '../support/e2e-fixture.ts';
import { numbers, summarizeLog } from '../faults/support/fixture.ts';
import { startTopologyGateway } from './support/gateway.ts';
import { DATA_PASSWORD, makeCertificates, startSecureCluster, startSecureSentinel, startSecureServer, type SecureRedis } from './support/secure-redis.ts';

/**
 * Redis as managed services give it (ElastiCache, Upstash, Redis Cloud): TLS only, a certificate
 * of a CA the system does not know, and an ACL user with a password. One server (REDIS_URL), a
 * cluster (REDIS_CLUSTER_NODES) and a primary behind a Sentinel that has a password of its own
 * (REDIS_SENTINELS, REDIS_SENTINEL_PASSWORD), each given REDIS_USERNAME, REDIS_PASSWORD,
 * REDIS_TLS=true and the CA in NODE_EXTRA_CA_CERTS; and the start-up check's words when one of
 * those is wrong.
 */
const openE2e = e2ePerTest('topologies');

async function secured(start: typeof startSecureCluster): Promise<{ e2e: E2e; redis: SecureRedis }> {
  const e2e = await openE2e();
  const certificates = await makeCertificates();
  e2e.defer(() => certificates.remove());
  const redis = await start(certificates);
  e2e.defer(() => redis.stop());
  return { e2e, redis };
}

async function expectDeliveredOnce(e2e: E2e, redis: SecureRedis): Promise<void> {
  const gateway = await startTopologyGateway(e2e, { redis: redis.env, dispatchers: 1 });
  const ids = [...(await gateway.send(numbers(0, 20))), ...(await gateway.send(numbers(50, 1)))];
  await gateway.waitForDelivered(ids.length, 20_000);
  const sent = await gateway.sent();
  expect(sent.length).toBe(ids.length);
  expect(new Set(sent)).toEqual(new Set(ids));
  expect(gateway.answers.map((a) => a.status)).toEqual([200, 200]);
  for (const name of ['api', 'dispatcher-0']) expect(summarizeLog(gateway.cluster.output(name)).errorLines).toEqual([]);
}

/** The API's start-up on `env`: its exit code and what it wrote. */
function startApi(e2e: E2e, env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const secret = 'secured-redis-secret-of-at-least-32-chars';
  return runBundle('api', [], { ...process.env, DATABASE_URL: e2e.database.url, JWT_SECRET: secret, PORT: '0', LOG_LEVEL: 'info', ...env }, 15_000);
}

describe('on Redis that wants TLS and a password', () => {
  it('delivers every message once through one server over TLS, REDIS_URL naming neither TLS nor the user', async () => {
    const { e2e, redis } = await secured(startSecureServer);
    await expectDeliveredOnce(e2e, redis);
  });

  it('delivers every message once through a Redis Cluster over TLS, as an ACL user', async () => {
    const { e2e, redis } = await secured(startSecureCluster);
    await expectDeliveredOnce(e2e, redis);
  });

  it('delivers every message once through a primary over TLS found by a Sentinel with a password of its own', async () => {
    const { e2e, redis } = await secured(startSecureSentinel);
    await expectDeliveredOnce(e2e, redis);
  });

  it('refuses to start in one line that names the variables: a wrong password, an unknown CA, a wrong Sentinel password', async () => {
    const cluster = await secured(startSecureCluster);
    const wrongPassword = await startApi(cluster.e2e, { ...cluster.redis.env, REDIS_PASSWORD: `not-${DATA_PASSWORD}` });
    expect(wrongPassword.code).toBe(1);
    expect(wrongPassword.lines).toEqual([
      expect.stringMatching(/^The Redis Cluster at .* refused smsgw's credentials: .*WRONGPASS.*Check REDIS_USERNAME and REDIS_PASSWORD\.$/),
    ]);

    const { NODE_EXTRA_CA_CERTS: _ca, ...untrusted } = cluster.redis.env;
    const unknownCa = await startApi(cluster.e2e, untrusted);
    expect(unknownCa.code).toBe(1);
    expect(unknownCa.lines).toEqual([
      expect.stringMatching(/^Cannot reach the Redis Cluster at .* over TLS \(REDIS_TLS\): .*certificate.*NODE_EXTRA_CA_CERTS/),
    ]);

    const sentinel = await secured(startSecureSentinel);
    const wrongSentinelPassword = await startApi(sentinel.e2e, { ...sentinel.redis.env, REDIS_SENTINEL_PASSWORD: 'not-the-sentinels-secret' });
    expect(wrongSentinelPassword.code).toBe(1);
    expect(wrongSentinelPassword.lines).toEqual([expect.stringMatching(/refused smsgw's credentials: .*REDIS_SENTINEL_PASSWORD for the Sentinels\.$/)]);
  });
});
