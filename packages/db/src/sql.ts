import pg from 'pg';

/**
 * A plain node-postgres pool for the hot paths whose every statement is raw SQL (dispatching,
 * the device protocol): Prisma adds about a millisecond and a WebAssembly query compiler to each
 * statement, which those paths, run thousands of times a second, do without.
 */
export type Sql = pg.Pool;

export function createSql({ url, poolSize = 10 }: { url: string; poolSize?: number }): Sql {
  return new pg.Pool({ connectionString: url, max: poolSize });
}
