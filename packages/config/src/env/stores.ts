import { Type } from 'typebox';

/** Where Postgres and Redis are. */
export const DatabaseEnv = Type.Object({
  DATABASE_URL: Type.String({
    default: 'postgresql://postgres@127.0.0.1:5432/smsgw',
    pattern: '^postgres(ql)?://',
    description: 'Postgres connection URL.',
  }),
});

/**
 * Where what needs a session of its own goes when DATABASE_URL is a transaction pooler (PgBouncer):
 * docs/operations.md, "Postgres behind a transaction pooler".
 */
export const DirectDatabaseEnv = Type.Object({
  DATABASE_DIRECT_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        "Postgres connection URL straight to Postgres (not through a transaction pooler such as PgBouncer), for what needs a session of its own: migrations, the API's LISTEN for credential changes and its listings' pool. Unset: DATABASE_URL serves those too, and the API refuses to start when DATABASE_URL is a connection pooler.",
    }),
  ),
});

// host:port, comma-separated; an IPv6 address in brackets ([::1]:6379).
const HOST_PORTS = '^(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5}(,(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5})*$';

/**
 * Where Redis is: one server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or a primary found
 * through Sentinel (REDIS_SENTINELS); docs/operations.md, "Redis Cluster and Sentinel".
 */
export const RedisEnv = Type.Object({
  REDIS_URL: Type.String({
    default: 'redis://127.0.0.1:6379',
    pattern: '^rediss?://',
    description: 'Redis connection URL, of a single Redis server. Ignored when REDIS_CLUSTER_NODES or REDIS_SENTINELS is set.',
  }),
  REDIS_CLUSTER_NODES: Type.Optional(
    Type.String({
      pattern: HOST_PORTS,
      description:
        'A Redis Cluster instead: some of its nodes as host:port, comma-separated (the others are discovered). Every key then carries the hash tag of QUEUE_PREFIX ({smsgw}), so all of them are in one slot: the cluster gives failover, not sharding.',
    }),
  ),
  REDIS_SENTINELS: Type.Optional(
    Type.String({
      pattern: HOST_PORTS,
      description: 'Redis behind Sentinel instead: the Sentinels as host:port, comma-separated; the primary is the one they name REDIS_SENTINEL_NAME.',
    }),
  ),
  REDIS_SENTINEL_NAME: Type.String({
    default: 'mymaster',
    pattern: '^[A-Za-z0-9_.:-]+$',
    description: 'With REDIS_SENTINELS: the name under which the Sentinels monitor the primary (`sentinel monitor <name> …`).',
  }),
  REDIS_USERNAME: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'The Redis ACL user (AUTH <user> <password>) of the cluster nodes, or of the primary and replicas the Sentinels name; with REDIS_URL, for a URL that names none. Unset: the default user.',
    }),
  ),
  REDIS_PASSWORD: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "The password of the cluster nodes, or of the primary and replicas the Sentinels name (their requirepass, or REDIS_USERNAME's); with REDIS_URL, for a URL that carries none.",
    }),
  ),
  REDIS_TLS: Type.Boolean({
    default: false,
    description:
      "TLS on every connection to Redis: the cluster nodes, or the Sentinels and the primary they name (with REDIS_URL, as rediss:// does). The servers' certificates are checked against the system CAs and NODE_EXTRA_CA_CERTS.",
  }),
  REDIS_SENTINEL_USERNAME: Type.Optional(Type.String({ minLength: 1, description: "With REDIS_SENTINELS: the Sentinels' own ACL user, when they have one." })),
  REDIS_SENTINEL_PASSWORD: Type.Optional(
    Type.String({
      minLength: 1,
      description: "With REDIS_SENTINELS: the Sentinels' own password (their requirepass), which is not the data nodes' REDIS_PASSWORD.",
    }),
  ),
  QUEUE_PREFIX: Type.String({
    default: 'smsgw',
    pattern: '^[A-Za-z0-9_.:{}-]+$',
    description:
      "Prefix of every key and channel of smsgw in Redis (BullMQ's included); processes sharing one queue use the same prefix. On a Redis Cluster it is used as a hash tag, {smsgw}, unless it has one already.",
  }),
});
