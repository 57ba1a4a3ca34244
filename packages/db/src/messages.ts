import type { CallbackEvent, CallbackFormat, Encoding, MessageFields, MessageState, SendAttempt } from '@smsgw/core';
import { pageOf, type Condition, type Page, type PageRequest } from './paging.ts';
import type { ListingSql, Params, SqlPool } from './sql.ts';

/** A message as the API reads it: the mapper's fields (@smsgw/core's MessageFields), each of them stored. */
export interface MessageRow extends MessageFields {
  userId: string;
  requestedDeviceId: string | null;
  sendAt: Date | null;
  validUntil: Date | null;
  simNumber: number | null;
  attempts: SendAttempt[];
  offeredAt: Date | null;
  failedAt: Date | null;
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
  /** The send's callback (Kannel's dlr-url, Twilio's StatusCallback), stored with it and named by each of its messages. */
  callback?: NewCallback | null;
  /** SMS Gate ciphertexts as recipients and text (absent: false): stored as they are, for SMS Gate phones only. */
  encrypted?: boolean;
}

/** A per-send callback to store (packages/core/src/callbacks). */
export interface NewCallback {
  id: string;
  url: string;
  format: CallbackFormat;
  events: CallbackEvent[];
  context: Record<string, unknown>;
}

const COLUMNS = `id, user_id AS "userId", batch_id AS "batchId", device_id AS "deviceId", requested_device_id AS "requestedDeviceId",
  to_number AS "to", body, segments, encoding::text AS encoding, state::text AS state, error, created_at AS "createdAt",
  updated_at AS "updatedAt", sent_at AS "sentAt", delivered_at AS "deliveredAt", send_at AS "sendAt", valid_until AS "validUntil",
  sim_number AS "simNumber", attempts, offered_at AS "offeredAt", failed_at AS "failedAt"`;

export async function findMessage(sql: SqlPool, options: { userId: string; id: string }): Promise<MessageRow | null> {
  const { rows } = await sql.query<MessageRow>(`SELECT ${COLUMNS} FROM messages WHERE id = $1 AND user_id = $2`, [options.id, options.userId]);
  return rows[0] ?? null;
}

export interface MessageFilter extends PageRequest {
  userId: string;
  states?: MessageState[];
  to?: string;
  batchId?: string;
  deviceId?: string;
}

/** A page of the user's messages, newest first (paging.ts: keyset or offset, a capped total). */
export async function listMessages(sql: ListingSql, f: MessageFilter): Promise<Page<MessageRow>> {
  const { batchId, to, deviceId } = f;
  // A batch's messages are its user's: the batch's owner is checked once (a one-time filter), so
  // that the batch index alone serves the filter, never an AND with the user's whole history.
  const owner: Condition[] =
    batchId === undefined
      ? [(p) => `user_id = ${p.add(f.userId)}::uuid`]
      : [
          (p) => `batch_id = ${p.add(batchId)}::uuid`,
          (p) => `EXISTS (SELECT 1 FROM batches WHERE id = ${p.add(batchId)}::uuid AND user_id = ${p.add(f.userId)}::uuid)`,
        ];
  const common = [...owner, ...(to !== undefined ? [(p: Params) => `to_number = ${p.add(to)}`] : [])];
  const states: Condition[][] = f.states?.map((state) => [(p) => `state = ${p.add(state)}::message_state`]) ?? [[]];
  // The device a record shows (see toMessageRecord): the assigned one, else the one named at send.
  const devices: Condition[][] =
    deviceId === undefined
      ? [[]]
      : [[(p) => `device_id = ${p.add(deviceId)}::uuid`], [() => 'device_id IS NULL', (p) => `requested_device_id = ${p.add(deviceId)}::uuid`]];
  const branches = states.flatMap((state) => devices.map((device) => [...state, ...device]));
  return pageOf<MessageRow>(sql, { table: 'messages', columns: COLUMNS, common, branches, limit: f.limit, offset: f.offset, cursor: f.cursor });
}
