import { describe, expect, it } from 'vitest';
import { RedisSettingsError, hasHashTag, hostPorts, redisTopology, replicasToWait, withKeyPrefix } from './topology.ts';

const server = { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_SENTINEL_NAME: 'mymaster', QUEUE_PREFIX: 'smsgw' };

describe('redisTopology', () => {
  it('is the one server of REDIS_URL when neither a cluster nor Sentinels are set', () => {
    expect(redisTopology(server)).toEqual({ kind: 'server', variable: 'REDIS_URL', url: 'redis://127.0.0.1:6379', data: { tls: false } });
  });

  it('is the cluster of REDIS_CLUSTER_NODES, REDIS_URL ignored', () => {
    expect(redisTopology({ ...server, REDIS_CLUSTER_NODES: 'a:7000,10.0.0.2:7001' })).toEqual({
      kind: 'cluster',
      variable: 'REDIS_CLUSTER_NODES',
      nodes: [
        { host: 'a', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      data: { tls: false },
    });
  });

  it('is the primary that the Sentinels of REDIS_SENTINELS name REDIS_SENTINEL_NAME', () => {
    expect(redisTopology({ ...server, REDIS_SENTINELS: 's1:26379,[::1]:26380', REDIS_SENTINEL_NAME: 'smsgw' })).toEqual({
      kind: 'sentinel',
      variable: 'REDIS_SENTINELS',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'smsgw',
      data: { tls: false },
      sentinel: { tls: false },
    });
  });

  it('gives the data nodes REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS, and the Sentinels their own user and password', () => {
    const secured = { ...server, REDIS_USERNAME: 'smsgw', REDIS_PASSWORD: 'data-secret', REDIS_TLS: true };
    expect(redisTopology({ ...secured, REDIS_CLUSTER_NODES: 'a:7000' })).toMatchObject({ data: { username: 'smsgw', password: 'data-secret', tls: true } });
    expect(redisTopology({ ...secured, REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_PASSWORD: 'sentinel-secret' })).toMatchObject({
      data: { username: 'smsgw', password: 'data-secret', tls: true },
      sentinel: { password: 'sentinel-secret', tls: true },
    });
    expect(redisTopology(secured)).toMatchObject({ kind: 'server', data: { username: 'smsgw', password: 'data-secret', tls: true } });
  });

  it('refuses a password or a user both in REDIS_URL and in its own variable, naming both', () => {
    const withPassword = { ...server, REDIS_URL: 'redis://:in-url@127.0.0.1:6379', REDIS_PASSWORD: 'in-variable' };
    expect(() => redisTopology(withPassword)).toThrow(/REDIS_URL carries a password and REDIS_PASSWORD/);
    const withUser = { ...server, REDIS_URL: 'redis://someone@127.0.0.1:6379', REDIS_USERNAME: 'other' };
    expect(() => redisTopology(withUser)).toThrow(/REDIS_URL names a user and REDIS_USERNAME/);
    // A user in the URL and the password in REDIS_PASSWORD (a secret kept apart) is one of each.
    expect(redisTopology({ ...server, REDIS_URL: 'redis://someone@127.0.0.1:6379', REDIS_PASSWORD: 'secret' })).toMatchObject({ data: { password: 'secret' } });
  });

  it('refuses a cluster and Sentinels at once, naming both variables', () => {
    expect(() => redisTopology({ ...server, REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 's:26379' })).toThrow(RedisSettingsError);
    expect(() => redisTopology({ ...server, REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 's:26379' })).toThrow(/REDIS_CLUSTER_NODES and REDIS_SENTINELS/);
  });
});

describe('withKeyPrefix', () => {
  it('makes QUEUE_PREFIX a hash tag on a cluster, so that every key is in one slot', () => {
    expect(withKeyPrefix({ ...server, REDIS_CLUSTER_NODES: 'a:7000' }).QUEUE_PREFIX).toBe('{smsgw}');
  });

  it('keeps a prefix that has a hash tag already, and changes nothing when applied again', () => {
    const once = withKeyPrefix({ ...server, REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: 'eu:{smsgw}' });
    expect(once.QUEUE_PREFIX).toBe('eu:{smsgw}');
    const tagged = withKeyPrefix({ ...server, REDIS_CLUSTER_NODES: 'a:7000' });
    expect(withKeyPrefix(tagged)).toBe(tagged);
  });

  it('keeps QUEUE_PREFIX as it is on one server and behind Sentinel, where the keys stay where they were', () => {
    expect(withKeyPrefix(server).QUEUE_PREFIX).toBe('smsgw');
    expect(withKeyPrefix({ ...server, REDIS_SENTINELS: 's:26379' }).QUEUE_PREFIX).toBe('smsgw');
  });
});

describe('hasHashTag', () => {
  it.each([
    ['{smsgw}', true],
    ['a{b}c', true],
    ['smsgw', false],
    ['{}smsgw', false],
    ['smsgw}{', false],
    ['{smsgw', false],
  ])('%s: %s', (prefix, expected) => {
    expect(hasHashTag(prefix)).toBe(expected);
  });
});

describe('replicasToWait', () => {
  it('waits for one replica on a cluster and behind Sentinel, none on one server, unless REDIS_WAIT_REPLICAS says', () => {
    expect(replicasToWait(server)).toBe(0);
    expect(replicasToWait({ ...server, REDIS_CLUSTER_NODES: 'a:7000' })).toBe(1);
    expect(replicasToWait({ ...server, REDIS_SENTINELS: 's:26379' })).toBe(1);
    expect(replicasToWait({ ...server, REDIS_SENTINELS: 's:26379', REDIS_WAIT_REPLICAS: 0 })).toBe(0);
    expect(replicasToWait({ ...server, REDIS_WAIT_REPLICAS: 2 })).toBe(2);
  });
});

describe('hostPorts', () => {
  it('reads host:port pairs, IPv6 addresses in brackets', () => {
    expect(hostPorts('redis-0.redis:6379,[fd00::1]:6380')).toEqual([
      { host: 'redis-0.redis', port: 6379 },
      { host: 'fd00::1', port: 6380 },
    ]);
  });
});
