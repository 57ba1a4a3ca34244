import type { ListPosition } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';

/**
 * Listing that costs the same whatever the history (issue 15): newest first by (created_at, id),
 * a page by keyset (`cursor`) or by offset, and a total that is exact up to TOTAL_CAP matches and
 * flagged as capped above it, so that no list request ever counts a user's whole history.
 */
export const TOTAL_CAP = 10_000;

/** Where the next page starts: the last row of this one (encoded for clients by @smsgw/core's encodeCursor). */
export type ListCursor = ListPosition;

export interface Page<T> {
  rows: T[];
  /** Matches of the filter: exact while `totalExact`, else TOTAL_CAP (there are more). */
  total: number;
  totalExact: boolean;
  /** Set when rows follow this page. */
  nextCursor: ListCursor | null;
}

export interface PageRequest {
  limit: number;
  offset?: number;
  cursor?: ListCursor;
}

/**
 * A page of `table` for one filter given as `branches`: conditions ORed together, each served
 * by an index ordered by (…, created_at DESC, id DESC). Each branch reads at most offset + limit + 1
 * rows in index order and the page is cut from their union (Postgres would otherwise append every
 * match of the branches and sort them), so a filter over several states or a device's assigned and
 * named messages reads about a page of rows, never all matches; `common` applies to all.
 */
export async function pageOf<T extends { createdAt: Date; id: string }>(
  db: Db,
  // `columns` names created_at "createdAt" and has id: the page is ordered by them.
  options: { table: Prisma.Sql; columns: Prisma.Sql; common: Prisma.Sql[]; branches: Prisma.Sql[][] } & PageRequest,
): Promise<Page<T>> {
  const { cursor, limit, offset = 0 } = options;
  const keyset = cursor ? [Prisma.sql`(created_at, id) < (${cursor.createdAt}, ${cursor.id}::uuid)`] : [];
  const where = (branch: Prisma.Sql[], extra: Prisma.Sql[]) => Prisma.join([...options.common, ...branch, ...extra], ' AND ');
  // Each branch reads its own first offset + limit + 1 rows in index order; the merge of those holds the page.
  const pageBranches = Prisma.join(
    options.branches.map(
      (branch) =>
        Prisma.sql`(SELECT ${options.columns} FROM ${options.table} WHERE ${where(branch, keyset)} ORDER BY created_at DESC, id DESC LIMIT ${offset + limit + 1})`,
    ),
    ' UNION ALL ',
  );
  const countBranches = Prisma.join(
    options.branches.map((branch) => Prisma.sql`(SELECT 1 FROM ${options.table} WHERE ${where(branch, [])} LIMIT ${TOTAL_CAP + 1})`),
    ' UNION ALL ',
  );
  const [rows, counted] = await Promise.all([
    db.$queryRaw<T[]>(Prisma.sql`SELECT * FROM (${pageBranches}) page ORDER BY "createdAt" DESC, id DESC LIMIT ${limit + 1} OFFSET ${offset}`),
    db.$queryRaw<{ n: number }[]>(Prisma.sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM (${countBranches}) matches LIMIT ${TOTAL_CAP + 1}) capped`),
  ]);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  const n = counted[0]!.n;
  return { rows: page, total: Math.min(n, TOTAL_CAP), totalExact: n <= TOTAL_CAP, nextCursor: more && last ? { createdAt: last.createdAt, id: last.id } : null };
}
