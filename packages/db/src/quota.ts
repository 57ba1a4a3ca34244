import type { Db } from './client.ts';
import type { Tx } from './transaction.ts';

/**
 * Charges `count` messages to the user's month when the whole charge fits under `limit`, in one
 * conditional statement: concurrent charges serialise on the row, and a refused one changes nothing.
 */
export async function chargeQuota(
  tx: Tx,
  options: { userId: string; period: Date; count: number; limit: number },
): Promise<boolean> {
  const { userId, period, count, limit } = options;
  const rows = await tx.$queryRaw<{ used: number }[]>`
    INSERT INTO quota_usage (user_id, period, used)
    SELECT ${userId}::uuid, ${period}::date, ${count}::int WHERE ${count}::int <= ${limit}::int
    ON CONFLICT (user_id, period) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
      WHERE quota_usage.used + EXCLUDED.used <= ${limit}::int
    RETURNING used`;
  return rows.length === 1;
}

export async function quotaUsed(db: Db, options: { userId: string; period: Date }): Promise<number> {
  const row = await db.quotaUsage.findUnique({
    where: { userId_period: { userId: options.userId, period: options.period } },
    select: { used: true },
  });
  return row?.used ?? 0;
}
