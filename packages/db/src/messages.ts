import type { CallbackEvent, CallbackFormat, Encoding, MessageState, SendAttempt } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';
import { pageOf, type Page, type PageRequest } from './paging.ts';

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
  sendAt: Date | null;
  validUntil: Date | null;
  simNumber: number | null;
  attempts: SendAttempt[];
  offeredAt: Date | null;
  failedAt: Date | null;
}

const messageColumns = {
  id: true, userId: true, batchId: true, deviceId: true, requestedDeviceId: true, to: true, body: true, segments: true, encoding: true,
  state: true, error: true, createdAt: true, updatedAt: true, sentAt: true, deliveredAt: true, sendAt: true, validUntil: true, simNumber: true,
  attempts: true, offeredAt: true, failedAt: true,
} as const;

type EncodingColumn = 'GSM_7' | 'UCS_2';

function toRow(row: Omit<MessageRow, 'encoding' | 'attempts'> & { encoding: EncodingColumn; attempts: unknown }): MessageRow {
  return { ...row, encoding: row.encoding === 'GSM_7' ? 'GSM-7' : 'UCS-2', attempts: row.attempts as SendAttempt[] };
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
  /** The batch of the send; `externalId`: the id a client API names it by (unique per user). */
  batch: { id: string; recipientsCount: number; externalId?: string | null } | null;
  requestedDeviceId: string | null;
  createdAt: Date;
  /** The send's timing and SIM, the same for every message of it (absent: none). */
  sendAt?: Date | null;
  validUntil?: Date | null;
  simNumber?: number | null;
  /** SMS Gate's priority (default 0): 100 or more skips the device's pacing. */
  priority?: number;
  /** Whether the phone asks for a delivery report (default true). */
  withDeliveryReport?: boolean;
  /** The send's callback (Kannel's dlr-url), stored with it and named by each of its messages. */
  callback?: NewCallback | null;
  /** Twilio's `StatusCallback` (absent: none). */
  statusCallback?: string | null;
}

/** A per-send callback to store (packages/core/src/callbacks). */
export interface NewCallback {
  id: string;
  url: string;
  format: CallbackFormat;
  events: CallbackEvent[];
  context: Record<string, unknown>;
}

export async function findMessage(db: Db, options: { userId: string; id: string }): Promise<MessageRow | null> {
  const row = await db.message.findFirst({ where: { id: options.id, userId: options.userId }, select: messageColumns });
  return row && toRow(row);
}

export interface MessageFilter extends PageRequest {
  userId: string;
  states?: MessageState[];
  to?: string;
  batchId?: string;
  deviceId?: string;
}

const LIST_COLUMNS = Prisma.sql`id, user_id AS "userId", batch_id AS "batchId", device_id AS "deviceId", requested_device_id AS "requestedDeviceId",
  to_number AS "to", body, segments, encoding::text AS encoding, state::text AS state, error, created_at AS "createdAt",
  updated_at AS "updatedAt", sent_at AS "sentAt", delivered_at AS "deliveredAt", send_at AS "sendAt", valid_until AS "validUntil",
  sim_number AS "simNumber", attempts, offered_at AS "offeredAt", failed_at AS "failedAt"`;

/** A page of the user's messages, newest first (paging.ts: keyset or offset, a capped total). */
export async function listMessages(db: Db, f: MessageFilter): Promise<Page<MessageRow>> {
  const common = [
    Prisma.sql`user_id = ${f.userId}::uuid`,
    ...(f.to !== undefined ? [Prisma.sql`to_number = ${f.to}`] : []),
    ...(f.batchId !== undefined ? [Prisma.sql`batch_id = ${f.batchId}::uuid`] : []),
  ];
  const states = f.states?.map((state) => [Prisma.sql`state = ${state}::message_state`]) ?? [[]];
  // The device a record shows (see toMessageRecord): the assigned one, else the one named at send.
  const devices = f.deviceId === undefined
    ? [[]]
    : [[Prisma.sql`device_id = ${f.deviceId}::uuid`], [Prisma.sql`device_id IS NULL`, Prisma.sql`requested_device_id = ${f.deviceId}::uuid`]];
  const branches = states.flatMap((state) => devices.map((device) => [...state, ...device]));
  return pageOf<MessageRow>(db, { table: Prisma.sql`messages`, columns: LIST_COLUMNS, common, branches, limit: f.limit, offset: f.offset, cursor: f.cursor });
}
