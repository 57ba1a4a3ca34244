import { isUuid, newId } from '@smsgw/core';
import { isUniqueViolation, type SqlPool } from './sql.ts';

export interface UserRow {
  id: string;
  name: string;
  monthlyQuota: number | null;
}

/** A user as an operator sees it: with its creation time and whether it is disabled. */
export interface UserDetailRow extends UserRow {
  createdAt: Date;
  disabledAt: Date | null;
}

const USER_COLUMNS = 'id, name, monthly_quota AS "monthlyQuota"';
const DETAIL_COLUMNS = `${USER_COLUMNS}, created_at AS "createdAt", disabled_at AS "disabledAt"`;

/** User names are unique (`users_name_key`): another user has this one. */
export class UserNameTakenError extends Error {
  override name = 'UserNameTakenError';

  constructor(readonly userName: string) {
    super(`A user named ${JSON.stringify(userName)} exists already.`);
  }
}

export async function createUser(sql: SqlPool, options: { name: string; monthlyQuota?: number | null }): Promise<UserRow> {
  try {
    const { rows } = await sql.query<UserRow>(`INSERT INTO users (id, name, monthly_quota) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`, [
      newId(),
      options.name,
      options.monthlyQuota ?? null,
    ]);
    return rows[0]!;
  } catch (error) {
    if (isUniqueViolation(error, 'users_name_key')) throw new UserNameTakenError(options.name);
    throw error;
  }
}

export async function findUser(sql: SqlPool, id: string): Promise<UserRow | null> {
  const { rows } = await sql.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** The user of this name (names are unique). */
export async function findUserByName(sql: SqlPool, name: string): Promise<UserRow | null> {
  const { rows } = await sql.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE name = $1`, [name]);
  return rows[0] ?? null;
}

/** A user named by its id or by its name; an id wins over a user whose name looks like one. */
export async function findUserByIdOrName(sql: SqlPool, ref: string): Promise<UserDetailRow | null> {
  const { rows } = await sql.query<UserDetailRow>(
    `SELECT ${DETAIL_COLUMNS} FROM users WHERE id = $1::uuid OR name = $2 ORDER BY (id = $1::uuid) IS TRUE DESC LIMIT 1`,
    [isUuid(ref) ? ref : null, ref],
  );
  return rows[0] ?? null;
}

/** A page of the users, newest first, with their total count. */
export async function listUsers(sql: SqlPool, o: { limit: number; offset: number }): Promise<{ rows: UserDetailRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<UserDetailRow>(`SELECT ${DETAIL_COLUMNS} FROM users ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, [o.limit, o.offset]),
    sql.query<{ n: number }>('SELECT count(*)::int AS n FROM users'),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/**
 * Disables or enables a user: a disabled user's API keys and JWTs are refused (its devices still
 * deliver what it sent before). Disabling twice keeps the first time. Null when there is no such user.
 */
export async function setUserDisabled(sql: SqlPool, o: { userId: string; disabled: boolean }): Promise<UserDetailRow | null> {
  const { rows } = await sql.query<UserDetailRow>(
    `UPDATE users SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, $3) END WHERE id = $1 RETURNING ${DETAIL_COLUMNS}`,
    [o.userId, o.disabled, new Date()],
  );
  return rows[0] ?? null;
}

/** Sets a user's own monthly limit; null returns the user to the default of the environment. */
export async function setUserQuota(sql: SqlPool, options: { userId: string; limit: number | null }): Promise<boolean> {
  const { rowCount } = await sql.query('UPDATE users SET monthly_quota = $2 WHERE id = $1', [options.userId, options.limit]);
  return rowCount === 1;
}
