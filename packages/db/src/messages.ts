import type { Encoding, MessageState } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';
import type { Tx } from './transaction.ts';

export interface MessageRow {
  id: string;
  userId: string;
  batchId: string | null;
  deviceId: string | null;
  /** The device named at send; `deviceId` stays null until the dispatcher assigns it. */
  requestedDeviceId: string | null;
  to: string;
  body: string;
  segments: number;
  encoding: Encoding;
  state: MessageState;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
  deliveredAt: Date | null;
}

const messageColumns = {
  id: true, userId: true, batchId: true, deviceId: true, requestedDeviceId: true, to: true, body: true, segments: true, encoding: true,
  state: true, error: true, createdAt: true, updatedAt: true, sentAt: true, deliveredAt: true,
} as const;

type EncodingColumn = 'GSM_7' | 'UCS_2';

function toRow(row: Omit<MessageRow, 'encoding'> & { encoding: EncodingColumn }): MessageRow {
  return { ...row, encoding: row.encoding === 'GSM_7' ? 'GSM-7' : 'UCS-2' };
}

/** The texts of a send: one text for every recipient, or one text per recipient (templates). */
export type MessageTexts =
  | { kind: 'same'; body: string; segments: number; encoding: Encoding }
  | { kind: 'each'; bodies: string[]; segments: number[]; encodings: Encoding[] };

export interface NewMessages {
  ids: string[];
  recipients: string[];
  texts: MessageTexts;
  userId: string;
  batch: { id: string; recipientsCount: number } | null;
  requestedDeviceId: string | null;
  createdAt: Date;
}

/**
 * Stores every message of a send (and its batch) in two statements whatever the number of
 * recipients: the rows go in through one `unnest` insert.
 */
export async function insertMessages(tx: Tx, m: NewMessages): Promise<void> {
  if (m.batch) {
    await tx.$executeRaw`
      INSERT INTO batches (id, user_id, recipients_count, created_at)
      VALUES (${m.batch.id}::uuid, ${m.userId}::uuid, ${m.batch.recipientsCount}, ${m.createdAt})`;
  }
  const common = Prisma.sql`${m.userId}::uuid, ${m.batch?.id ?? null}::uuid, ${m.requestedDeviceId}::uuid, ${m.createdAt}, ${m.createdAt}`;
  if (m.texts.kind === 'same') {
    await tx.$executeRaw`
      INSERT INTO messages (id, to_number, body, segments, encoding, user_id, batch_id, requested_device_id, created_at, updated_at)
      SELECT t.id, t.to_number, ${m.texts.body}, ${m.texts.segments}::int, ${m.texts.encoding}::message_encoding, ${common}
      FROM unnest(${m.ids}::uuid[], ${m.recipients}::text[]) AS t(id, to_number)`;
  } else {
    await tx.$executeRaw`
      INSERT INTO messages (id, to_number, body, segments, encoding, user_id, batch_id, requested_device_id, created_at, updated_at)
      SELECT t.id, t.to_number, t.body, t.segments, t.encoding::message_encoding, ${common}
      FROM unnest(${m.ids}::uuid[], ${m.recipients}::text[], ${m.texts.bodies}::text[], ${m.texts.segments}::int[],
                  ${m.texts.encodings}::text[]) AS t(id, to_number, body, segments, encoding)`;
  }
}

export async function findMessage(db: Db, options: { userId: string; id: string }): Promise<MessageRow | null> {
  const row = await db.message.findFirst({ where: { id: options.id, userId: options.userId }, select: messageColumns });
  return row && toRow(row);
}

export interface MessageFilter {
  userId: string;
  states?: MessageState[];
  to?: string;
  batchId?: string;
  deviceId?: string;
  limit: number;
  offset: number;
}

/** A page of the user's messages, newest first, with the total count of the filter. */
export async function listMessages(db: Db, f: MessageFilter): Promise<{ rows: MessageRow[]; total: number }> {
  const where = {
    userId: f.userId,
    ...(f.states && { state: { in: f.states } }),
    ...(f.to !== undefined && { to: f.to }),
    ...(f.batchId !== undefined && { batchId: f.batchId }),
    // The device a record shows (see toMessageRecord): the assigned one, else the one named at send.
    ...(f.deviceId !== undefined && { OR: [{ deviceId: f.deviceId }, { deviceId: null, requestedDeviceId: f.deviceId }] }),
  };
  const [rows, total] = await Promise.all([
    db.message.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: f.offset,
      take: f.limit,
      select: messageColumns,
    }),
    db.message.count({ where }),
  ]);
  return { rows: rows.map(toRow), total };
}
