import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = PrismaClient;

export interface CreateDbOptions {
  url: string;
  /** Connections in the pool. */
  poolSize?: number;
}

/** A Prisma client on the node-postgres driver adapter (no native query engine). */
export function createDb({ url, poolSize = 10 }: CreateDbOptions): Db {
  const adapter = new PrismaPg({ connectionString: url, max: poolSize });
  return new PrismaClient({ adapter });
}
