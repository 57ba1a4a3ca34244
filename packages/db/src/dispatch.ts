import { statesLeadingTo, type MessageState } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';

/** The dispatcher's statements: assignment, reports, leases. Each is one statement per batch. */
export interface PendingMessage {
  id: string;
  userId: string;
  requestedDeviceId: string | null;
  /** The device of the previous assignment, if a lease expired; avoided when another is available. */
  previousDeviceId: string | null;
  requestedDeviceGone: boolean;
}

export async function loadPendingMessages(db: Db, ids: string[]): Promise<PendingMessage[]> {
  const rows = await db.$queryRaw<{ id: string; user_id: string; requested_device_id: string | null; device_id: string | null; gone: boolean }[]>`
    SELECT m.id, m.user_id, m.requested_device_id, m.device_id, (d.deleted_at IS NOT NULL) AS gone
    FROM messages m LEFT JOIN devices d ON d.id = m.requested_device_id
    WHERE m.id = ANY(${ids}::uuid[]) AND m.state = 'pending'`;
  return rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    requestedDeviceId: r.requested_device_id,
    previousDeviceId: r.device_id,
    requestedDeviceGone: r.gone === true,
  }));
}

/** Available devices of each user, in a stable order (by id). */
export async function availableDevices(db: Db, options: { userIds: string[]; seenSince: Date }): Promise<Map<string, string[]>> {
  const rows = await db.$queryRaw<{ id: string; user_id: string }[]>`
    SELECT id, user_id FROM devices
    WHERE user_id = ANY(${options.userIds}::uuid[]) AND enabled AND deleted_at IS NULL AND last_seen_at >= ${options.seenSince}
    ORDER BY user_id, id`;
  const byUser = new Map<string, string[]>();
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.id]);
  return byUser;
}

/** Assigns messages to devices (pending -> assigned, compare-and-set); returns those it moved. */
export async function assignMessages(
  db: Db,
  options: { assignments: { id: string; deviceId: string }[]; now: Date },
): Promise<{ id: string; deviceId: string }[]> {
  if (options.assignments.length === 0) return [];
  const { now } = options;
  const ids = options.assignments.map((a) => a.id);
  const devices = options.assignments.map((a) => a.deviceId);
  const rows = await db.$queryRaw<{ id: string; device_id: string }[]>`
    WITH input AS (SELECT * FROM unnest(${ids}::uuid[], ${devices}::uuid[]) AS t(id, device_id)),
    moved AS (
      UPDATE messages m
      SET state = 'assigned', device_id = input.device_id, assigned_at = ${now}, updated_at = ${now}, assignments = m.assignments + 1
      FROM input WHERE m.id = input.id AND m.state = ANY(${statesLeadingTo('assigned')}::message_state[])
      RETURNING m.id, m.device_id
    ), history AS (
      INSERT INTO message_events (message_id, state, device_id, at) SELECT id, 'assigned', device_id, ${now} FROM moved
    )
    SELECT id, device_id FROM moved`;
  return rows.map((r) => ({ id: r.id, deviceId: r.device_id }));
}

export interface Transition {
  id: string;
  state: MessageState;
}

/** Fails messages that are in one of `from` (a subset of the states that may fail), with a reason. */
export async function failMessages(
  db: Db,
  options: { ids: string[]; error: string; now: Date; from?: MessageState[] },
): Promise<string[]> {
  if (options.ids.length === 0) return [];
  const from = (options.from ?? statesLeadingTo('failed')).filter((s) => statesLeadingTo('failed').includes(s));
  const { now } = options;
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH moved AS (
      UPDATE messages SET state = 'failed', failed_at = ${now}, updated_at = ${now}, error = ${options.error}
      WHERE id = ANY(${options.ids}::uuid[]) AND state = ANY(${from}::message_state[])
      RETURNING id, device_id
    ), history AS (
      INSERT INTO message_events (message_id, state, device_id, at, detail) SELECT id, 'failed', device_id, ${now}, ${options.error} FROM moved
    )
    SELECT id FROM moved`;
  return rows.map((r) => r.id);
}

export type ReportStatus = 'sent' | 'delivered' | 'failed';

export interface ReportInput {
  id: string;
  at: Date;
  error: string | null;
}

const REPORT_SETS: Record<ReportStatus, Prisma.Sql> = {
  sent: Prisma.sql`sent_at = input.at`,
  delivered: Prisma.sql`sent_at = coalesce(m.sent_at, input.at), delivered_at = input.at`,
  failed: Prisma.sql`failed_at = input.at, error = coalesce(input.error, 'The device reported that sending failed.')`,
};

/**
 * Applies one kind of report of one device: a compare-and-set from the states that may lead to
 * `status`, only on the device's own messages. Duplicate and backward reports match no row.
 */
export async function applyReports(
  db: Db,
  options: { deviceId: string; status: ReportStatus; reports: ReportInput[]; now: Date },
): Promise<string[]> {
  if (options.reports.length === 0) return [];
  const { deviceId, status, now } = options;
  const ids = options.reports.map((r) => r.id);
  const ats = options.reports.map((r) => r.at);
  const errors = options.reports.map((r) => r.error);
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH input AS (SELECT * FROM unnest(${ids}::uuid[], ${ats}::timestamptz[], ${errors}::text[]) AS t(id, at, error)),
    moved AS (
      UPDATE messages m SET state = ${status}::message_state, updated_at = ${now}, ${REPORT_SETS[status]}
      FROM input
      WHERE m.id = input.id AND m.device_id = ${deviceId}::uuid AND m.state = ANY(${statesLeadingTo(status)}::message_state[])
      RETURNING m.id, m.device_id, input.at, input.error
    ), history AS (
      INSERT INTO message_events (message_id, state, device_id, at, detail)
      SELECT id, ${status}::message_state, device_id, at, error FROM moved
    )
    SELECT id FROM moved`;
  return rows.map((r) => r.id);
}
