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
];
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
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((text) => message.includes(text))) return true;
  return isUnavailable(cause, depth + 1);
}
