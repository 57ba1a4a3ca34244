import type { ReceivedFields } from '@smsgw/core';
import type { Db } from './client.ts';
import { Prisma } from './generated/prisma/client.ts';
import { pageOf, type Page, type PageRequest } from './paging.ts';

/** Reading the user's incoming SMS (real-devices.md §4); they are stored by `storeInbound` (inbound.ts). */
const receivedColumns = {
  id: true, deviceId: true, from: true, to: true, body: true, simNumber: true, receivedAt: true, createdAt: true,
} as const;

export async function findReceived(db: Db, options: { userId: string; id: string }): Promise<ReceivedFields | null> {
  return db.receivedMessage.findFirst({ where: { id: options.id, userId: options.userId }, select: receivedColumns });
}

export interface ReceivedFilter extends PageRequest {
  userId: string;
  from?: string;
  deviceId?: string;
}

const LIST_COLUMNS = Prisma.sql`id, device_id AS "deviceId", from_number AS "from", to_number AS "to", body, sim_number AS "simNumber",
  received_at AS "receivedAt", created_at AS "createdAt"`;

/** A page of the user's incoming SMS, newest first by arrival (paging.ts: keyset or offset, a capped total). */
export async function listReceived(db: Db, f: ReceivedFilter): Promise<Page<ReceivedFields>> {
  const common = [
    Prisma.sql`user_id = ${f.userId}::uuid`,
    ...(f.from !== undefined ? [Prisma.sql`from_number = ${f.from}`] : []),
    ...(f.deviceId !== undefined ? [Prisma.sql`device_id = ${f.deviceId}::uuid`] : []),
  ];
  return pageOf<ReceivedFields>(db, { table: Prisma.sql`received_messages`, columns: LIST_COLUMNS, common, branches: [[]], limit: f.limit, offset: f.offset, cursor: f.cursor });
}
