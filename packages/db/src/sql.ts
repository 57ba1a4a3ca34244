import pg from 'pg';

/**
 * A plain node-postgres pool for the hot paths whose every statement is raw SQL (dispatching,
 * the device protocol): Prisma adds about a millisecond and a WebAssembly query compiler to each
 * statement, which those paths, run thousands of times a second, do without.
 */
export type Sql = pg.Pool;

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
