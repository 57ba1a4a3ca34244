import { newId } from '@smsgw/core';
import type { Db } from './client.ts';

export interface UserRow {
  id: string;
  name: string;
  monthlyQuota: number | null;
}

export const userColumns = { id: true, name: true, monthlyQuota: true } as const;

export async function createUser(db: Db, options: { name: string; monthlyQuota?: number | null }): Promise<UserRow> {
  return db.user.create({
    data: { id: newId(), name: options.name, monthlyQuota: options.monthlyQuota ?? null },
    select: userColumns,
  });
}

export async function findUser(db: Db, id: string): Promise<UserRow | null> {
  return db.user.findUnique({ where: { id }, select: userColumns });
}

export async function findUserByName(db: Db, name: string): Promise<UserRow | null> {
  return db.user.findFirst({ where: { name }, orderBy: { createdAt: 'asc' }, select: userColumns });
}

/** Sets a user's own monthly limit; null returns the user to the default of the environment. */
export async function setUserQuota(db: Db, options: { userId: string; limit: number | null }): Promise<boolean> {
  const { count } = await db.user.updateMany({ where: { id: options.userId }, data: { monthlyQuota: options.limit } });
  return count === 1;
}
