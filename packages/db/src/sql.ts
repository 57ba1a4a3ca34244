import pg from 'pg';

/**
 * A plain node-postgres pool for the hot paths whose every statement is raw SQL (dispatching,
 * the device protocol): Prisma adds about a millisecond and a WebAssembly query compiler to each
 * statement, which those paths, run thousands of times a second, do without.
 */
export type Sql = pg.Pool;

/**
 * What the statements of the API's resources (users, keys, devices, contacts, …) run on: the
 * pool, or the Prisma client of the CLI and the tests (client.ts), which answers the same.
 */
export type SqlPool = Pick<pg.Pool, 'query' | 'connect'>;

export interface CreateSqlOptions {
  url: string;
  poolSize?: number;
  /**
   * Called when an idle connection fails (Postgres restarted, the connection was terminated). The
   * pool drops that connection and opens another for the next query; without a listener Node would
   * treat the pool's `error` event as fatal and end the process.
   */
  onIdleError?: (error: Error) => void;
}

export function createSql({ url, poolSize = 10, onIdleError }: CreateSqlOptions): Sql {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', (error) => onIdleError?.(error));
  return pool;
}

declare const indexOrdered: unique symbol;

/**
 * A pool whose connections plan every statement without bitmap or sequential scans (session
 * settings sent when each connection opens), for the listings of paging.ts: one round trip a
 * page, where `SET LOCAL` in a transaction of its own took four. Only those listings use it;
 * every other statement keeps the planner's full choice on the main pool. Its `url` must hold
 * sessions: a transaction pooler (PgBouncer) refuses the settings (`unsupported startup parameter`),
 * and the API opens it on DATABASE_DIRECT_URL when set. `listingsInTransactions` (paging.ts) sets
 * the same per transaction, on any pool.
 */
export type ListingSql = Pick<pg.Pool, 'query'> & { readonly [indexOrdered]: true };

/** What the listings' statements are planned with. */
export const LISTING_SETTINGS = { enable_bitmapscan: 'off', enable_seqscan: 'off' } as const;

export function createListingSql({ url, poolSize = 5, onIdleError }: CreateSqlOptions): ListingSql & Pick<pg.Pool, 'end'> {
  const options = Object.entries(LISTING_SETTINGS)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  const pool = new pg.Pool({ connectionString: url, max: poolSize, options });
  pool.on('error', (error) => onIdleError?.(error));
  return pool as unknown as ListingSql & Pick<pg.Pool, 'end'>;
}

/**
 * Runs a statement that makes a row on first use and reads it otherwise (`INSERT … ON CONFLICT DO
 * NOTHING RETURNING …` UNION ALL the stored row) until it returns the row. When two first uses
 * meet, the second's insert waits for the first and then does nothing, and its read cannot see the
 * row either (its snapshot was taken before the first committed): it returns nothing once, and the
 * next try, on a new snapshot, reads the row.
 */
export async function madeOnFirstUse<R extends pg.QueryResultRow>(sql: Pick<Sql, 'query'>, text: string, params: unknown[]): Promise<R> {
  for (;;) {
    const { rows } = await sql.query<R>(text, params);
    if (rows[0]) return rows[0];
  }
}

/** A statement's parameters, numbered as they are added: `p.add(value)` returns its placeholder. */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * `column = $n, …` for the changes given (undefined: left as it is; null sets NULL), for an UPDATE
 * whose fields are each optional. Columns are the caller's constants, never input.
 */
export function assignments(p: Params, changes: Record<string, unknown>): string {
  return Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => `${column} = ${p.add(value)}`)
    .join(', ');
}

/** A unique violation (SQLSTATE 23505), of `constraint` when given. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** A pool or a client of one (inside a transaction): what a statement is run on. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * Runs `work` in a transaction on one connection of `sql`: committed when it returns, rolled back
 * when it throws (and the error passed on).
 */
export async function inTransaction<T>(sql: Pick<pg.Pool, 'connect'>, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await sql.connect();
  let broken: Error | undefined;
  // The pool listens for the errors of idle connections only: one that dies while checked out
  // (Postgres restarting) emits 'error' on the client, which would end the process unheard. The
  // query in flight fails with it too; the connection is discarded on release.
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
