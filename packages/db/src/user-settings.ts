import type { Db } from './client.ts';

/** A user's settings (`/api/v1/settings`). */
export interface UserSettings {
  /** Incoming STOP/START keywords keep the opt-out list. */
  optOutKeywords: boolean;
  /** A recipient keeps the device (and SIM) that last sent to it or received from it. */
  stickySender: boolean;
}

const settingsColumns = { optOutKeywords: true, stickySender: true } as const;

export async function findUserSettings(db: Db, userId: string): Promise<UserSettings | null> {
  return db.user.findUnique({ where: { id: userId }, select: settingsColumns });
}

/** Changes the settings given (the others stay); null when the user does not exist. */
export async function updateUserSettings(db: Db, userId: string, changes: Partial<UserSettings>): Promise<UserSettings | null> {
  const { count } = await db.user.updateMany({ where: { id: userId }, data: changes });
  return count === 1 ? findUserSettings(db, userId) : null;
}
