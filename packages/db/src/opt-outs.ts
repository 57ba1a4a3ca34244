import { madeOnFirstUse, type SqlPool } from './sql.ts';

/** A number on a user's opt-out list (docs/http-api.md, "Opt-outs"). */
export interface OptOutRow {
  phone: string;
  /** `keyword`: an incoming STOP; `api`: added through the API. */
  source: string;
  createdAt: Date;
}

/** A page of the user's opt-outs, newest first, with their total count. */
export async function listOptOuts(sql: SqlPool, o: { userId: string; limit: number; offset: number }): Promise<{ rows: OptOutRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<OptOutRow>(
      'SELECT phone, source, created_at AS "createdAt" FROM opt_outs WHERE user_id = $1 ORDER BY created_at DESC, phone DESC LIMIT $2 OFFSET $3',
      [o.userId, o.limit, o.offset],
    ),
    sql.query<{ n: number }>('SELECT count(*)::int AS n FROM opt_outs WHERE user_id = $1', [o.userId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** Lists the number (a number listed already keeps its entry); `created` tells which. */
export async function addOptOut(sql: SqlPool, o: { userId: string; phone: string; now: Date }): Promise<{ optOut: OptOutRow; created: boolean }> {
  const row = await madeOnFirstUse<OptOutRow & { created: boolean }>(
    sql,
    `WITH added AS (
       INSERT INTO opt_outs (user_id, phone, source, created_at) VALUES ($1, $2, 'api', $3)
       ON CONFLICT (user_id, phone) DO NOTHING
       RETURNING phone, source, created_at
     )
     SELECT phone, source, created_at AS "createdAt", true AS created FROM added
     UNION ALL
     SELECT phone, source, created_at, false FROM opt_outs WHERE user_id = $1 AND phone = $2 AND NOT EXISTS (SELECT 1 FROM added)`,
    [o.userId, o.phone, o.now],
  );
  const { created, ...optOut } = row;
  return { optOut, created };
}

/** Takes the number off the list; false when it was not listed. */
export async function removeOptOut(sql: SqlPool, o: { userId: string; phone: string }): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM opt_outs WHERE user_id = $1 AND phone = $2', [o.userId, o.phone]);
  return rowCount === 1;
}
