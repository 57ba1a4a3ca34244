import type { Cluster, Redis } from 'ioredis';

/**
 * Where smsgw's Redis is (docs/operations.md, "Redis Cluster and Sentinel"): one server (REDIS_URL),
 * a Redis Cluster (REDIS_CLUSTER_NODES), or a primary that Sentinels name (REDIS_SENTINELS). On a
 * cluster every key smsgw builds starts with QUEUE_PREFIX as a hash tag (`{smsgw}`), BullMQ's
 * included, so that each script, MULTI and pipeline finds its keys in one slot: the cluster gives
 * failover, not sharding (docs/decisions.md, "Redis Cluster: one slot").
 */

/** A connection to smsgw's Redis, whichever the topology: a server (alone or behind Sentinel) or a cluster. */
export type RedisClient = Redis | Cluster;

/** The variables that say where Redis is (packages/config's RedisEnv). */
export interface RedisSettings {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES?: string | undefined;
  REDIS_SENTINELS?: string | undefined;
  REDIS_SENTINEL_NAME: string;
  QUEUE_PREFIX: string;
}

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTopology =
  | { kind: 'server'; variable: 'REDIS_URL'; url: string }
  | { kind: 'cluster'; variable: 'REDIS_CLUSTER_NODES'; nodes: HostPort[] }
  | { kind: 'sentinel'; variable: 'REDIS_SENTINELS'; sentinels: HostPort[]; name: string };

/** A wrong combination of the Redis variables; its message is the one line that says so. */
export class RedisSettingsError extends Error {
  override name = 'RedisSettingsError';
}

/** The topology the variables describe: REDIS_CLUSTER_NODES or REDIS_SENTINELS when set (not both), else REDIS_URL. */
export function redisTopology(settings: RedisSettings): RedisTopology {
  const { REDIS_CLUSTER_NODES: cluster, REDIS_SENTINELS: sentinels } = settings;
  if (cluster && sentinels) {
    throw new RedisSettingsError('REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: set the one that describes your Redis, and unset the other.');
  }
  if (cluster) return { kind: 'cluster', variable: 'REDIS_CLUSTER_NODES', nodes: hostPorts(cluster) };
  if (sentinels) return { kind: 'sentinel', variable: 'REDIS_SENTINELS', sentinels: hostPorts(sentinels), name: settings.REDIS_SENTINEL_NAME };
  return { kind: 'server', variable: 'REDIS_URL', url: settings.REDIS_URL };
}

/** `host:port,[v6]:port,…` as the schema checked it. */
export function hostPorts(list: string): HostPort[] {
  return list.split(',').map((item) => {
    const colon = item.lastIndexOf(':');
    return { host: item.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(item.slice(colon + 1)) };
  });
}

/** Whether a key prefix has a hash tag: Redis hashes only what is between the first `{` and the next `}`, when that is not empty. */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  const close = open === -1 ? -1 : prefix.indexOf('}', open + 1);
  return close > open + 1;
}

/**
 * The configuration as the processes use it on this topology: on a cluster QUEUE_PREFIX becomes
 * a hash tag (`smsgw` -> `{smsgw}`) unless it has one, so that every key built from it (they all
 * start with it) is in one slot. Applied once where a process reads its configuration; applying
 * it again changes nothing.
 */
export function withKeyPrefix<T extends RedisSettings>(config: T): T {
  if (!config.REDIS_CLUSTER_NODES || hasHashTag(config.QUEUE_PREFIX)) return config;
  return { ...config, QUEUE_PREFIX: `{${config.QUEUE_PREFIX}}` };
}

/**
 * How many replicas must hold a device's reports before the API answers (REDIS_WAIT_REPLICAS):
 * by default 1 on a cluster or behind Sentinel, where a failover promotes a replica, 0 on one server.
 */
export function replicasToWait(settings: RedisSettings & { REDIS_WAIT_REPLICAS?: number | undefined }): number {
  return settings.REDIS_WAIT_REPLICAS ?? (redisTopology(settings).kind === 'server' ? 0 : 1);
}
