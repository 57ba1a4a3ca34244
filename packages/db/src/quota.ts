import type { Db } from './client.ts';

export async function quotaUsed(db: Db, options: { userId: string; period: Date }): Promise<number> {
  const row = await db.quotaUsage.findUnique({
    where: { userId_period: { userId: options.userId, period: options.period } },
    select: { used: true },
  });
  return row?.used ?? 0;
}
