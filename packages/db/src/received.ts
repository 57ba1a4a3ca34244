import type { ReceivedFields } from '@smsgw/core';
import { pageOf, type Condition, type Page, type PageRequest } from './paging.ts';
import type { ListingSql, Params, SqlPool } from './sql.ts';

/** Reading the user's incoming SMS (real-devices.md §4); they are stored by `storeInbound` (inbound.ts). */
const COLUMNS = `id, device_id AS "deviceId", from_number AS "from", to_number AS "to", body, sim_number AS "simNumber",
  received_at AS "receivedAt", created_at AS "createdAt"`;

export async function findReceived(sql: SqlPool, options: { userId: string; id: string }): Promise<ReceivedFields | null> {
  const { rows } = await sql.query<ReceivedFields>(`SELECT ${COLUMNS} FROM received_messages WHERE id = $1 AND user_id = $2`, [options.id, options.userId]);
  return rows[0] ?? null;
}

export interface ReceivedFilter extends PageRequest {
  userId: string;
  from?: string;
  deviceId?: string;
  /** Arrived at smsgw at or after this moment. */
  since?: Date;
  /** Arrived at smsgw before this moment. */
  until?: Date;
}

/** A page of the user's incoming SMS, newest first by arrival (paging.ts: keyset or offset, a capped total). */
export async function listReceived(sql: ListingSql, f: ReceivedFilter): Promise<Page<ReceivedFields>> {
  const { from, deviceId, since, until } = f;
  const common: Condition[] = [
    (p) => `user_id = ${p.add(f.userId)}::uuid`,
    ...(from !== undefined ? [(p: Params) => `from_number = ${p.add(from)}`] : []),
    ...(deviceId !== undefined ? [(p: Params) => `device_id = ${p.add(deviceId)}::uuid`] : []),
    ...(since !== undefined ? [(p: Params) => `created_at >= ${p.add(since)}::timestamptz`] : []),
    ...(until !== undefined ? [(p: Params) => `created_at < ${p.add(until)}::timestamptz`] : []),
  ];
  return pageOf<ReceivedFields>(sql, {
    table: 'received_messages',
    columns: COLUMNS,
    common,
    branches: [[]],
    limit: f.limit,
    offset: f.offset,
    cursor: f.cursor,
  });
}
