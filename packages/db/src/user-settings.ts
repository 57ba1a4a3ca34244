import { assignments, Params, type SqlPool } from './sql.ts';

/** A user's settings (`/api/v1/settings`). */
export interface UserSettings {
  /** Incoming STOP/START keywords keep the opt-out list. */
  optOutKeywords: boolean;
  /** A recipient keeps the device (and SIM) that last sent to it or received from it. */
  stickySender: boolean;
}

const COLUMNS = 'opt_out_keywords AS "optOutKeywords", sticky_sender AS "stickySender"';

export async function findUserSettings(sql: SqlPool, userId: string): Promise<UserSettings | null> {
  const { rows } = await sql.query<UserSettings>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [userId]);
  return rows[0] ?? null;
}

/** Changes the settings given (the others stay); null when the user does not exist. */
export async function updateUserSettings(sql: SqlPool, userId: string, changes: Partial<UserSettings>): Promise<UserSettings | null> {
  const p = new Params();
  // `id = id` keeps the statement whole when no setting is given: it then reads them.
  const set = assignments(p, { opt_out_keywords: changes.optOutKeywords, sticky_sender: changes.stickySender }) || 'id = id';
  const { rows } = await sql.query<UserSettings>(`UPDATE users SET ${set} WHERE id = ${p.add(userId)} RETURNING ${COLUMNS}`, p.values);
  return rows[0] ?? null;
}
