import type pg from 'pg';
import type { ListPosition } from '@smsgw/core';
import { LISTING_SETTINGS, type ListingSql, Params } from './sql.ts';
import { inTransaction } from './sql.ts';

/**
 * Listing that costs the same whatever the history (issue 15): newest first by (created_at, id),
 * a page by keyset (`cursor`) or by offset, and a total that is exact up to TOTAL_CAP matches and
 * flagged as capped above it, so that no list request ever counts a user's whole history.
 */
/**
 * 1,000, not 10,000 (issue 27, item 6): before VACUUM has set the visibility map, each counted
 * match costs a visit to its heap page, and a filter whose matches are spread over the history
 * (status=queued) visits one page per match; counting 10,001 took 20 to 40 ms, 1,001 about a quarter.
 */
export const TOTAL_CAP = 1_000;

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

/** A condition of a listing, written with its parameters numbered by `p`. */
export type Condition = (p: Params) => string;

/**
 * A page of `table` for one filter given as `branches`: conditions ORed together, each served
 * by an index ordered by (…, created_at DESC, id DESC). Each branch reads at most offset + limit + 1
 * rows in index order and the page is cut from their union (Postgres would otherwise append every
 * match of the branches and sort them), so a filter over several states or a device's assigned and
 * named messages reads about a page of rows, never all matches; `common` applies to all.
 * On a ListingSql (sql.ts), planned without bitmap or sequential scans: right after a bulk load,
 * before autovacuum analysed the table, the planner guesses that a user's rows are a few thousand
 * and would build a bitmap of all of them (a million entries for a million messages) before the
 * LIMIT; every listing filter has an index that gives its rows in page order, and walking it stops
 * at the page or the cap whatever the statistics say (issue 27, item 6).
 */
export async function pageOf<T extends { createdAt: Date; id: string }>(
  sql: ListingSql,
  // `columns` names created_at "createdAt" and has id: the page is ordered by them.
  options: { table: string; columns: string; common: Condition[]; branches: Condition[][] } & PageRequest,
): Promise<Page<T>> {
  const { cursor, limit, offset = 0 } = options;
  const p = new Params();
  const keyset: Condition[] = cursor ? [(q) => `(created_at, id) < (${q.add(cursor.createdAt)}::timestamptz, ${q.add(cursor.id)}::uuid)`] : [];
  const where = (branch: Condition[], extra: Condition[]) => [...options.common, ...branch, ...extra].map((condition) => condition(p)).join(' AND ') || 'true';
  // Each branch reads its own first offset + limit + 1 rows in index order; the merge of those holds the page.
  const pageBranches = options.branches
    .map(
      (branch) =>
        `(SELECT ${options.columns} FROM ${options.table} WHERE ${where(branch, keyset)} ORDER BY created_at DESC, id DESC LIMIT ${p.add(offset + limit + 1)})`,
    )
    .join(' UNION ALL ');
  // In index order too, so that the count stops at the cap on the same index as the page.
  const countBranches = options.branches
    .map((branch) => `(SELECT 1 FROM ${options.table} WHERE ${where(branch, [])} ORDER BY created_at DESC, id DESC LIMIT ${TOTAL_CAP + 1})`)
    .join(' UNION ALL ');
  // One statement: the capped count, and beside it the page's rows (none: one row of nulls).
  const { rows: joined } = await sql.query<T & { pageTotal: number }>(
    `SELECT capped.n AS "pageTotal", page.*
      FROM (SELECT count(*)::int AS n FROM (SELECT 1 FROM (${countBranches}) matches LIMIT ${TOTAL_CAP + 1}) c) capped
      LEFT JOIN (SELECT * FROM (${pageBranches}) merged ORDER BY "createdAt" DESC, id DESC LIMIT ${p.add(limit + 1)} OFFSET ${p.add(offset)}) page ON true
      ORDER BY page."createdAt" DESC, page.id DESC`,
    p.values,
  );
  const n = joined[0]!.pageTotal;
  const rows = joined.filter((row) => row.id !== null).map(({ pageTotal: _, ...row }) => row as unknown as T);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    rows: page,
    total: Math.min(n, TOTAL_CAP),
    totalExact: n <= TOTAL_CAP,
    nextCursor: more && last ? { createdAt: last.createdAt, id: last.id } : null,
  };
}

/**
 * The listings on any pool, a transaction pooler's too (the CLI's, on DATABASE_URL alone): each
 * statement in a transaction of its own that first sets LISTING_SETTINGS locally. Four round trips
 * where the listings' own pool (createListingSql) takes one; a command lists one page.
 */
export function listingsInTransactions(sql: Pick<pg.Pool, 'connect'>): ListingSql {
  const settings = Object.entries(LISTING_SETTINGS)
    .map(([name, value]) => `set_config('${name}', '${value}', true)`)
    .join(', ');
  const query = (text: string, values?: unknown[]) =>
    inTransaction(sql, async (client) => {
      await client.query(`SELECT ${settings}`);
      return client.query(text, values);
    });
  return { query } as unknown as ListingSql;
}
