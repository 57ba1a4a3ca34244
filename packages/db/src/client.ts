import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.ts';
import { createSql, type SqlPool } from './sql.ts';

/**
 * Prisma, for the CLI, the tests and the benchmarks (never the API or the dispatcher, which run on
 * a plain pool: decisions.md, "Where do the hot paths talk to Postgres?"). It also answers
 * `query`, on the same pool, so that it can be handed to any of this package's statements.
 */
export type Db = PrismaClient & SqlPool;

export interface CreateDbOptions {
  url: string;
  /** Connections in the pool. */
  poolSize?: number;
}

/** A Prisma client on the node-postgres driver adapter (no native query engine). */
export function createDb({ url, poolSize = 10 }: CreateDbOptions): Db {
  // The pool drops a connection that fails while idle (a test's database dropped under it) rather than throw.
  const pool = createSql({ url, poolSize });
  const client = new PrismaClient({ adapter: new PrismaPg(pool) });
  const disconnect = client.$disconnect.bind(client);
  return Object.assign(client, {
    query: pool.query.bind(pool) as SqlPool['query'],
    connect: pool.connect.bind(pool) as SqlPool['connect'],
    async $disconnect() {
      await disconnect();
      if (!pool.ended) await pool.end();
    },
  });
}
