import { deviceSimNumbers, mergeSimBudgets, newId, readSimBudgets, type Budgets, type DeviceFields, type SimBudgetsPatch } from '@smsgw/core';
import type { Db } from './client.ts';
import { DEVICE_TOKEN_PREFIX, generateSecret, hashSecret } from './secrets.ts';

/** A device as stored: the fields of its record (packages/core, toDeviceRecord) and its user. */
export interface DeviceRow extends DeviceFields {
  userId: string;
}

const deviceColumns = {
  id: true, userId: true, name: true, enabled: true, protocol: true, lastSeenAt: true, streamSeenAt: true, streamClosedAt: true, appVersion: true, pushToken: true,
  simCards: true, rateLimitPerMinute: true, rateLimitPerHour: true, rateLimitPerDay: true, createdAt: true, updatedAt: true,
  batteryLevel: true, batteryCharging: true, signalDbm: true, network: true, failuresInARow: true, pausedUntil: true, pauseReason: true,
  segmentsPerHour: true, segmentsPerDay: true, segmentsPerMonth: true, uniqueRecipientsPerMonth: true, simBudgets: true,
} as const;

/**
 * Registers a native-protocol device (modem agent, simulator); it counts as seen only once it
 * connects. The token is returned this once.
 */
export async function createDevice(db: Db, options: { userId: string; name: string }): Promise<{ token: string; device: DeviceRow }> {
  const token = generateSecret(DEVICE_TOKEN_PREFIX);
  const now = new Date();
  const device = await db.device.create({
    data: { id: newId(), userId: options.userId, name: options.name, tokenHash: hashSecret(token), createdAt: now, updatedAt: now },
    select: deviceColumns,
  });
  return { token, device };
}

export async function listDevices(db: Db, userId: string): Promise<DeviceRow[]> {
  return db.device.findMany({ where: { userId, deletedAt: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select: deviceColumns });
}

/** How many devices the user has (deleted ones not counted). */
export async function countDevices(db: Db, userId: string): Promise<number> {
  return db.device.count({ where: { userId, deletedAt: null } });
}

export async function findDevice(db: Db, options: { userId: string; id: string }): Promise<DeviceRow | null> {
  return db.device.findFirst({ where: { id: options.id, userId: options.userId, deletedAt: null }, select: deviceColumns });
}

export async function updateDevice(
  db: Db,
  options: {
    userId: string;
    id: string;
    name?: string;
    enabled?: boolean;
    /** Pacing: a number sets the limit, null removes it, undefined leaves it. */
    rateLimitPerMinute?: number | null;
    rateLimitPerHour?: number | null;
    rateLimitPerDay?: number | null;
    /** Carrier budgets of the device as a whole: a number sets, null removes, undefined leaves. */
    budgets?: Partial<Budgets>;
    /** Per-SIM budgets, merged into the stored ones; a SIM the device does not have is refused (invalid_request). */
    sims?: SimBudgetsPatch[];
  },
): Promise<DeviceRow | null> {
  const { userId: _userId, id: _id, budgets = {}, sims, ...changes } = options;
  const now = new Date();
  const budgetsChange = Object.values(budgets).some((v) => v !== undefined) || sims !== undefined;
  const where = { id: options.id, userId: options.userId, deletedAt: null };
  // One transaction, the row locked, so that two PATCHes of different SIMs both stay and a refused SIM changes nothing.
  return db.$transaction(async (tx) => {
    const current = await tx.$queryRaw<{ sim_budgets: unknown; sim_cards: unknown }[]>`
      SELECT sim_budgets, sim_cards FROM devices WHERE id = ${options.id}::uuid AND user_id = ${options.userId}::uuid AND deleted_at IS NULL FOR UPDATE`;
    if (current.length === 0) return null;
    const simBudgets = sims === undefined ? undefined : mergeSimBudgets(readSimBudgets(current[0]!.sim_budgets), sims, deviceSimNumbers(current[0]!.sim_cards));
    await tx.device.updateMany({
      where,
      data: { ...changes, ...budgets, ...(simBudgets ? { simBudgets } : {}), ...(budgetsChange ? { budgetsChangedAt: now } : {}), updatedAt: now },
    });
    return tx.device.findFirst({ where, select: deviceColumns });
  });
}

/** Deletes a device: its token stops working and it is never assigned again; its messages keep its id. */
export async function deleteDevice(db: Db, options: { userId: string; id: string }): Promise<boolean> {
  const now = new Date();
  const { count } = await db.device.updateMany({
    where: { id: options.id, userId: options.userId, deletedAt: null },
    data: { deletedAt: now, enabled: false, updatedAt: now },
  });
  return count === 1;
}

/** Issues a new token for a device; the old one stops working. */
export async function rotateDeviceToken(db: Db, options: { userId: string; id: string }): Promise<string | null> {
  const token = generateSecret(DEVICE_TOKEN_PREFIX);
  const { count } = await db.device.updateMany({
    where: { id: options.id, userId: options.userId, deletedAt: null },
    data: { tokenHash: hashSecret(token), updatedAt: new Date() },
  });
  return count === 1 ? token : null;
}
