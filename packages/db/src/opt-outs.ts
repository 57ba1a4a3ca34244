import type { Db } from './client.ts';

/** A number on a user's opt-out list (docs/http-api.md, "Opt-outs"). */
export interface OptOutRow {
  phone: string;
  /** `keyword`: an incoming STOP; `api`: added through the API. */
  source: string;
  createdAt: Date;
}

const optOutColumns = { phone: true, source: true, createdAt: true } as const;

/** A page of the user's opt-outs, newest first, with their total count. */
export async function listOptOuts(db: Db, o: { userId: string; limit: number; offset: number }): Promise<{ rows: OptOutRow[]; total: number }> {
  const where = { userId: o.userId };
  const [rows, total] = await Promise.all([
    db.optOut.findMany({ where, orderBy: [{ createdAt: 'desc' }, { phone: 'desc' }], skip: o.offset, take: o.limit, select: optOutColumns }),
    db.optOut.count({ where }),
  ]);
  return { rows, total };
}

/** Lists the number (a number listed already keeps its entry); `created` tells which. */
export async function addOptOut(db: Db, o: { userId: string; phone: string; now: Date }): Promise<{ optOut: OptOutRow; created: boolean }> {
  // A concurrent insert of the same number commits after this statement's snapshot: neither part
  // sees it then, and a second try does.
  for (let attempt = 1; ; attempt++) {
    const found = await addOnce(db, o);
    if (found) return found;
    if (attempt === 5) throw new Error('the opt-out could neither be added nor found');
  }
}

async function addOnce(db: Db, o: { userId: string; phone: string; now: Date }): Promise<{ optOut: OptOutRow; created: boolean } | null> {
  const rows = await db.$queryRaw<{ phone: string; source: string; created_at: Date; created: boolean }[]>`
    WITH added AS (
      INSERT INTO opt_outs (user_id, phone, source, created_at) VALUES (${o.userId}::uuid, ${o.phone}, 'api', ${o.now})
      ON CONFLICT (user_id, phone) DO NOTHING
      RETURNING phone, source, created_at
    )
    SELECT phone, source, created_at, true AS created FROM added
    UNION ALL
    SELECT phone, source, created_at, false FROM opt_outs WHERE user_id = ${o.userId}::uuid AND phone = ${o.phone} AND NOT EXISTS (SELECT 1 FROM added)`;
  const row = rows[0];
  if (!row) return null;
  return { optOut: { phone: row.phone, source: row.source, createdAt: row.created_at }, created: row.created };
}

/** Takes the number off the list; false when it was not listed. */
export async function removeOptOut(db: Db, o: { userId: string; phone: string }): Promise<boolean> {
  const { count } = await db.optOut.deleteMany({ where: { userId: o.userId, phone: o.phone } });
  return count === 1;
}
