import type { SqlPool } from './sql.ts';

export async function quotaUsed(sql: SqlPool, options: { userId: string; period: Date }): Promise<number> {
  const { rows } = await sql.query<{ used: number }>('SELECT used FROM quota_usage WHERE user_id = $1 AND period = $2::date', [options.userId, options.period]);
  return rows[0]?.used ?? 0;
}
