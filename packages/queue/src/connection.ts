import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redisTopology, type RedisClient, type RedisCredentials, type RedisSettings, type RedisTopology } from './topology.ts';

/**
 * Redis connections, on whichever topology the settings describe (topology.ts). Producers fail fast
 * when Redis is away (the message rows are the outbox, so nothing is lost); workers retry forever,
 * as BullMQ requires.
 */
export interface ConnectionOptions {
  lazyConnect?: boolean;
  /** Milliseconds a command may take; undefined: no limit. */
  commandTimeout?: number | undefined;
  connectTimeout?: number;
  enableOfflineQueue?: boolean;
  maxRetriesPerRequest?: number | null;
  /** false: one attempt to connect and none again once lost (the CLI, the start-up check). */
  reconnect?: boolean;
}

export function createProducerConnection(settings: RedisSettings, options: ConnectionOptions = {}): RedisClient {
  return connect(redisTopology(settings), { enableOfflineQueue: false, maxRetriesPerRequest: 1, ...options });
}

export function createWorkerConnection(settings: RedisSettings, options: ConnectionOptions = {}): RedisClient {
  return connect(redisTopology(settings), { maxRetriesPerRequest: null, ...options });
}

const never = () => null;

// A primary that Sentinel demoted (the old one, back) answers writes READONLY: ask the Sentinels again.
const reconnectOnReadonly = (error: Error) => error.message.startsWith('READONLY');

function connect(topology: RedisTopology, options: ConnectionOptions): RedisClient {
  const { reconnect, ...rest } = options;
  const own: RedisOptions = withoutUndefined({ ...rest, ...(reconnect === false && { retryStrategy: never }) });
  switch (topology.kind) {
    case 'server':
      // The URL's own fields win over options in ioredis: REDIS_USERNAME and REDIS_PASSWORD go into it.
      return new Redis(withUrlCredentials(topology.url, topology.data), { ...own, ...tlsOptions(topology.data) });
    case 'sentinel':
      return new Redis({
        ...own,
        ...serverOptions(topology.data),
        sentinels: topology.sentinels,
        name: topology.name,
        reconnectOnError: reconnectOnReadonly,
        ...withoutUndefined({ sentinelUsername: topology.sentinel.username, sentinelPassword: topology.sentinel.password }),
        ...(topology.sentinel.tls && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
        ...(reconnect === false && { sentinelRetryStrategy: never }),
      });
    case 'cluster':
      return new Cluster(topology.nodes, clusterOptions(clusterDefaults(topology.data), options));
  }
}

/** A data server's AUTH and TLS, as ioredis's options. */
function serverOptions(credentials: RedisCredentials): RedisOptions {
  return withoutUndefined({ username: credentials.username, password: credentials.password, ...tlsOptions(credentials) });
}

/** TLS with Node's defaults: the server's certificate checked against the system CAs and NODE_EXTRA_CA_CERTS. */
function tlsOptions(credentials: RedisCredentials): RedisOptions {
  return credentials.tls ? { tls: {} } : {};
}

function withUrlCredentials(url: string, credentials: RedisCredentials): string {
  if (!credentials.username && !credentials.password) return url;
  const parsed = new URL(url);
  if (credentials.username) parsed.username = encodeURIComponent(credentials.username);
  if (credentials.password) parsed.password = encodeURIComponent(credentials.password);
  return parsed.toString();
}

/**
 * No ready check (CLUSTER INFO saying `cluster_state:ok`): when it fails, as it does while a
 * failover is under way, ioredis's Cluster reconnects, and the promise of the `connect()` that
 * started it never settles. BullMQ awaits that promise when it reconnects a worker's blocking
 * connection that stopped answering, and the worker then never takes a job again. Without the check
 * the cluster is ready once it knows the slots, and a command that meets CLUSTERDOWN is retried.
 */
function clusterDefaults(credentials: RedisCredentials): ClusterOptions {
  return {
    enableReadyCheck: false,
    redisOptions: serverOptions(credentials),
    // With TLS, a node is reached by the name it is known by, not an address looked up beforehand,
    // so that its certificate is checked against that name (as managed clusters announce names).
    ...(credentials.tls && { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) }),
  };
}

/** ioredis's Cluster takes some options for itself and the rest for each node's connection. */
function clusterOptions(base: ClusterOptions, options: ConnectionOptions): ClusterOptions {
  const { lazyConnect, enableOfflineQueue, reconnect, ...node } = options;
  return withoutUndefined({
    ...base,
    lazyConnect,
    enableOfflineQueue,
    ...(reconnect === false && { clusterRetryStrategy: never }),
    // Each node's own options: a key present as undefined (no command timeout) clears the base's.
    redisOptions: { ...base.redisOptions, ...node },
  });
}

function withoutUndefined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as T;
}

/** Another connection like `client`, to the same Redis, with `options` over its own. */
export function duplicateConnection(client: RedisClient, options: ConnectionOptions = {}): RedisClient {
  if (client instanceof Cluster) return client.duplicate([], clusterOptions(client.options, options));
  const { reconnect, ...rest } = options;
  return client.duplicate({ ...rest, ...(reconnect === false && { retryStrategy: never }) });
}

/**
 * Reports a connection's errors as `what`; on a cluster also each node's own, which ioredis's
 * Cluster emits apart ('node error'), as `what` with the node's address.
 */
export function onRedisError(client: RedisClient, what: string, report: (what: string, error: Error) => void): void {
  client.on('error', (error: Error) => report(what, error));
  if (client instanceof Cluster) client.on('node error', (error: Error, address: string) => report(`${what}: node ${address}`, error));
}

/**
 * A connection of its own for SUBSCRIBE (a subscribed connection can do nothing else): it waits for
 * Redis rather than failing, with no command timeout, and subscribes again to its channels when it
 * reconnects. On a cluster it listens on one node, picked again when that node goes; PUBLISH
 * reaches every node of a cluster, so any node will do.
 */
export function createSubscriberConnection(client: RedisClient): RedisClient {
  return duplicateConnection(client, { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
}

/** The servers that hold keys: each primary of a cluster, or the one server. */
function primaries(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Every server a client may be subscribed on: each node of a cluster (replicas too), or the one server. */
export function subscribableNodes(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('all') : [client];
}

/** Removes every key under a prefix (queues, job schedulers, cursors): for tests and benchmarks. */
export async function deletePrefix(client: RedisClient, prefix: string): Promise<void> {
  for (const redis of primaries(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:*`, 'COUNT', 1000);
      cursor = next;
      // One command per key: on a cluster the keys of one node may be in several slots.
      if (keys.length > 0) await (client instanceof Cluster ? Promise.all(keys.map((key) => client.unlink(key))) : redis.unlink(...keys));
    } while (cursor !== '0');
  }
}

/**
 * Why a process cannot start on this Redis, in one line that names the variable to fix
 * (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS); or null when it answers.
 */
export async function redisProblem(settings: RedisSettings, timeoutMs = 5000): Promise<string | null> {
  let topology: RedisTopology;
  try {
    topology = redisTopology(settings);
  } catch (error) {
    return (error as Error).message;
  }
  let where: string;
  if (topology.kind === 'server') {
    try {
      const parsed = new URL(topology.url);
      where = `Redis at ${parsed.hostname}:${parsed.port || 6379}`;
    } catch {
      return `REDIS_URL is not a URL (redis://host:port).`;
    }
  } else if (topology.kind === 'cluster') {
    where = `the Redis Cluster at ${settings.REDIS_CLUSTER_NODES}`;
  } else {
    where = `the Redis primary "${topology.name}" (REDIS_SENTINEL_NAME) through the Sentinels at ${settings.REDIS_SENTINELS}`;
  }
  const client = connect(topology, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, reconnect: false });
  let last: Error | undefined;
  client.on('error', (error: Error) => (last = error));
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([client.connect().then(() => client.ping()), timeout]);
    return null;
  } catch (error) {
    const failure = last ?? (error as Error);
    return startProblem(where, topology, topology.kind === 'cluster' ? await withNodeError(failure, topology, timeoutMs) : failure);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** What the start-up check says of a failed connection: refused credentials, an untrusted certificate, or no answer. */
function startProblem(where: string, topology: RedisTopology, error: Error): string {
  const why = reason(error);
  if (/\b(WRONGPASS|NOAUTH)\b|invalid password/i.test(why)) {
    const variables =
      topology.kind === 'server'
        ? 'the user and password in REDIS_URL, or REDIS_USERNAME and REDIS_PASSWORD'
        : topology.kind === 'cluster'
          ? 'REDIS_USERNAME and REDIS_PASSWORD'
          : 'REDIS_USERNAME and REDIS_PASSWORD for the primary, REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD for the Sentinels';
    return `${capitalized(where)} refused smsgw's credentials: ${why}. Check ${variables}.`;
  }
  if (/certificate|CERT_|SSL routines|wrong version number/i.test(why)) {
    return `Cannot reach ${where} over TLS (REDIS_TLS): ${why}. Trust its CA with NODE_EXTRA_CA_CERTS, or check that it speaks TLS on that port.`;
  }
  return `Cannot reach ${where} (${topology.variable}): ${why}. Is it running?`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The cluster's error with the cause a node gives: ioredis's Cluster asks the nodes for their slots
 * on connections whose own errors (a refused password, an untrusted certificate) it drops, and says
 * only "Connection is closed". The first node, asked alone with the same options, tells why.
 */
async function withNodeError(error: Error, topology: Extract<RedisTopology, { kind: 'cluster' }>, timeoutMs: number): Promise<Error> {
  const node = new Redis({
    ...topology.nodes[0],
    ...serverOptions(topology.data),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: never,
  });
  let cause: Error | undefined;
  node.on('error', (nodeError: Error) => (cause ??= nodeError));
  try {
    await node.connect();
    await node.ping();
  } catch (nodeError) {
    cause ??= nodeError as Error;
  } finally {
    node.disconnect();
  }
  return cause ? Object.assign(new Error(error.message), { lastNodeError: cause }) : error;
}

/** An error's message, with the last node's error that ioredis's Cluster keeps beside its own. */
function reason(error: Error): string {
  const node = (error as Error & { lastNodeError?: Error }).lastNodeError;
  const own = error.message.replace(/\.+$/, '');
  return node ? `${own} (${node.message.replace(/\.+$/, '')})` : own;
}
