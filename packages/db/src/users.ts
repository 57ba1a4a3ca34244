import { isUuid, newId } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';

export interface UserRow {
  id: string;
  name: string;
  monthlyQuota: number | null;
}

export const userColumns = { id: true, name: true, monthlyQuota: true } as const;

/** A user as an operator sees it: with its creation time and whether it is disabled. */
export interface UserDetailRow extends UserRow {
  createdAt: Date;
  disabledAt: Date | null;
}

const detailColumns = { ...userColumns, createdAt: true, disabledAt: true } as const;

/** User names are unique (`users_name_key`): another user has this one. */
export class UserNameTakenError extends Error {
  override name = 'UserNameTakenError';

  constructor(readonly userName: string) {
    super(`A user named ${JSON.stringify(userName)} exists already.`);
  }
}

export async function createUser(db: Db, options: { name: string; monthlyQuota?: number | null }): Promise<UserRow> {
  try {
    return await db.user.create({
      data: { id: newId(), name: options.name, monthlyQuota: options.monthlyQuota ?? null },
      select: userColumns,
    });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new UserNameTakenError(options.name);
    throw error;
  }
}

export async function findUser(db: Db, id: string): Promise<UserRow | null> {
  return db.user.findUnique({ where: { id }, select: userColumns });
}

/** The user of this name (names are unique). */
export async function findUserByName(db: Db, name: string): Promise<UserRow | null> {
  return db.user.findUnique({ where: { name }, select: userColumns });
}

/** A user named by its id or by its name; an id wins over a user whose name looks like one. */
export async function findUserByIdOrName(db: Db, ref: string): Promise<UserDetailRow | null> {
  const byId = isUuid(ref) ? await db.user.findUnique({ where: { id: ref }, select: detailColumns }) : null;
  return byId ?? db.user.findUnique({ where: { name: ref }, select: detailColumns });
}

/** A page of the users, newest first, with their total count. */
export async function listUsers(db: Db, o: { limit: number; offset: number }): Promise<{ rows: UserDetailRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.user.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: detailColumns }),
    db.user.count(),
  ]);
  return { rows, total };
}

/**
 * Disables or enables a user: a disabled user's API keys and JWTs are refused (its devices still
 * deliver what it sent before). Disabling twice keeps the first time. Null when there is no such user.
 */
export async function setUserDisabled(db: Db, o: { userId: string; disabled: boolean }): Promise<UserDetailRow | null> {
  const where = o.disabled ? { id: o.userId, disabledAt: null } : { id: o.userId };
  await db.user.updateMany({ where, data: { disabledAt: o.disabled ? new Date() : null } });
  return db.user.findUnique({ where: { id: o.userId }, select: detailColumns });
}

/** Sets a user's own monthly limit; null returns the user to the default of the environment. */
export async function setUserQuota(db: Db, options: { userId: string; limit: number | null }): Promise<boolean> {
  const { count } = await db.user.updateMany({ where: { id: options.userId }, data: { monthlyQuota: options.limit } });
  return count === 1;
}
