// Postgres or Redis cannot take the request now, so it can be retried later (a 503 of the API, a
// job run again shortly by a dispatcher), not a fault of ours.
// Node's socket errors; Prisma's "cannot reach", "connection closed" and pool timeout (P1001, P1002,
// P1017, P2024); Postgres's connection exceptions (class 08) and its shutting-down or starting-up
// answers (57P01-57P03, "the database system is not yet accepting connections").
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'P1001',
  'P1002',
  'P1017',
  'P2024',
  '57P01',
  '57P02',
  '57P03',
]);
const UNAVAILABLE_MESSAGES = [
  "Stream isn't writeable",
  'Connection terminated',
  'not yet accepting connections',
  'Connection is closed',
  'Command timed out',
  'the database system is shutting down',
  'the database system is starting up',
  'the database system is in recovery mode',
  // node-postgres, of a pooled client whose connection broke (or closed) while it was checked out
  'has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  // ioredis, of a connection lost with a command on it (maxRetriesPerRequest) or closed while connecting
  'Reached the max retries per request limit',
  'Command aborted due to connection close',
  'Connection is aborted',
  'Socket timeout',
  // ioredis's Cluster while a failover moves the slots: redirections, (re)discovering the nodes
  'Too many Cluster redirections',
  "Cluster isn't ready",
  'Failed to refresh slots cache',
  'None of startup nodes is available',
  'Cluster is disconnected',
  'Node is disconnected',
  'All sentinels are unreachable',
];
// Redis's answers in a failover (docs/operations.md, "Redis Cluster and Sentinel"): a slot without a
// primary, a slot moving, a replica not yet promoted or still loading, a demoted primary refusing
// writes, too few replicas (min-replicas-to-write); and a server that no longer takes smsgw's
// credentials (a password rotated on the server first, "Passwords and TLS"). The code starts the message.
const REDIS_UNAVAILABLE = /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|READONLY|NOREPLICAS|NOAUTH|WRONGPASS) /;
// Prisma reports a Postgres error of a query as its own code (P2010, …) with Postgres's code in
// `meta.code` or only in the message ("Code: `57P03`").
const PRISMA_QUOTED_CODE = /Code: `(\w{5})`/;

/** Whether an error (or one it was caused by) says that Postgres or Redis is away for now. */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message, cause, originalCode, meta } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    originalCode?: unknown;
    meta?: { code?: unknown };
  };
  const quoted = typeof message === 'string' ? PRISMA_QUOTED_CODE.exec(message)?.[1] : undefined;
  for (const value of [code, originalCode, meta?.code, quoted]) {
    if (typeof value === 'string' && (UNAVAILABLE_CODES.has(value) || /^08\d{3}$/.test(value))) return true;
  }
  if (typeof message === 'string' && (UNAVAILABLE_MESSAGES.some((text) => message.includes(text)) || REDIS_UNAVAILABLE.test(message))) return true;
  return isUnavailable(cause, depth + 1);
}
