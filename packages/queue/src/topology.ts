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
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS?: boolean | undefined;
  REDIS_SENTINEL_USERNAME?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  QUEUE_PREFIX: string;
}

/** Who smsgw is to a Redis server, and whether it speaks TLS to it. */
export interface RedisCredentials {
  username?: string | undefined;
  password?: string | undefined;
  tls: boolean;
}

export interface HostPort {
  host: string;
  port: number;
}

/** `data`: the servers that hold the keys; `sentinels`: the Sentinels themselves. */
export type RedisTopology =
  | { kind: 'server'; variable: 'REDIS_URL'; url: string; data: RedisCredentials }
  | { kind: 'cluster'; variable: 'REDIS_CLUSTER_NODES'; nodes: HostPort[]; data: RedisCredentials }
  | { kind: 'sentinel'; variable: 'REDIS_SENTINELS'; sentinels: HostPort[]; name: string; data: RedisCredentials; sentinel: RedisCredentials };

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
  const tls = settings.REDIS_TLS === true;
  const data: RedisCredentials = { username: settings.REDIS_USERNAME, password: settings.REDIS_PASSWORD, tls };
  if (cluster) return { kind: 'cluster', variable: 'REDIS_CLUSTER_NODES', nodes: hostPorts(cluster), data };
  if (sentinels) {
    const sentinel = { username: settings.REDIS_SENTINEL_USERNAME, password: settings.REDIS_SENTINEL_PASSWORD, tls };
    return { kind: 'sentinel', variable: 'REDIS_SENTINELS', sentinels: hostPorts(sentinels), name: settings.REDIS_SENTINEL_NAME, data, sentinel };
  }
  const url = urlCredentials(settings.REDIS_URL);
  if (url.password && data.password) {
    throw new RedisSettingsError('REDIS_URL carries a password and REDIS_PASSWORD is set too: keep one of them.');
  }
  if (url.username && data.username) {
    throw new RedisSettingsError('REDIS_URL names a user and REDIS_USERNAME is set too: keep one of them.');
  }
  return { kind: 'server', variable: 'REDIS_URL', url: settings.REDIS_URL, data };
}

/** The user and password a redis:// URL carries, if any ('' when absent, or when it is not a URL: the start-up check says so). */
function urlCredentials(url: string): { username: string; password: string } {
  try {
    const { username, password } = new URL(url);
    return { username, password };
  } catch {
    return { username: '', password: '' };
  }
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
