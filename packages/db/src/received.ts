import type { ReceivedFields } from '@smsgw/core';
import type { Db } from './client.ts';

/** Reading the user's incoming SMS (real-devices.md §4); they are stored by `storeInbound` (inbound.ts). */
const receivedColumns = {
  id: true, deviceId: true, from: true, to: true, body: true, simNumber: true, receivedAt: true, createdAt: true,
} as const;

export async function findReceived(db: Db, options: { userId: string; id: string }): Promise<ReceivedFields | null> {
  return db.receivedMessage.findFirst({ where: { id: options.id, userId: options.userId }, select: receivedColumns });
}

export interface ReceivedFilter {
  userId: string;
  from?: string;
  deviceId?: string;
  limit: number;
  offset: number;
}

/** A page of the user's incoming SMS, newest first (by arrival, then id), with the total count of the filter. */
export async function listReceived(db: Db, f: ReceivedFilter): Promise<{ rows: ReceivedFields[]; total: number }> {
  const where = {
    userId: f.userId,
    ...(f.from !== undefined && { from: f.from }),
    ...(f.deviceId !== undefined && { deviceId: f.deviceId }),
  };
  const [rows, total] = await Promise.all([
    db.receivedMessage.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: f.offset,
      take: f.limit,
      select: receivedColumns,
    }),
    db.receivedMessage.count({ where }),
  ]);
  return { rows, total };
}
