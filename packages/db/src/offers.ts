import { unacknowledgedSql, unclaimedSql } from '@smsgw/core';
import { beforeQueueDeadline } from './queue-deadline.ts';
import type { Sql } from './sql.ts';

/**
 * Offering a device its messages (docs/devices.md, "Delivery"): both protocols hand out messages
 * this way. An offer changes nothing but `offered_at`; the message stays `assigned` and is offered
 * again on every claim or pull until the device reports anything about it, so an answer lost on
 * the way loses nothing. Once offered it never moves to another device.
 */
export interface OfferedMessage {
  id: string;
  to: string;
  body: string;
  createdAt: Date;
  /** The first offer; the message's lease counts from it. */
  offeredAt: Date;
  sendAt: Date | null;
  validUntil: Date | null;
  /** The SIM slot to send from (1-3); null: the device's default. */
  simNumber: number | null;
  /** SMS Gate's priority: 100 or more makes the app skip its own limits and delays. */
  priority: number;
  withDeliveryReport: boolean;
  /** `to` and `body` are SMS Gate ciphertexts, for the phone to decrypt (only SMS Gate phones are given such messages). */
  encrypted: boolean;
}

/**
 * `oldest`/`newest`: by creation (the SMS Gate app's `fifo`/`lifo`); `fresh-first`: messages never
 * offered before those offered already, oldest first, so that a device that claims in a loop
 * reaches new messages while its reports of earlier ones are still on their way.
 */
export type OfferOrder = 'oldest' | 'newest' | 'fresh-first';

const ORDER_BY: Record<OfferOrder, string> = {
  oldest: 'created_at, id',
  newest: 'created_at DESC, id DESC',
  'fresh-first': '(offered_at IS NOT NULL), created_at, id',
};

/**
 * Up to `limit` of the device's assigned messages, marked as offered. Rows are locked while they
 * are read (SKIP LOCKED: a row being released by the sweep or moved by a report is not offered),
 * so a message returned here was the device's at that moment and now counts as offered, which
 * keeps the assignment lease from handing it to another device. The device's own `offered_at`
 * records that it takes messages (at most once a second). A disabled or deleted device is offered
 * nothing; nor is a message past its queue deadline before its first offer (its valid_until, else
 * `maxQueueSeconds` from when it was due; none when not given), or one the phone was asked to
 * cancel (it holds it, or it never will).
 */
export async function offerMessages(
  sql: Sql,
  options: { deviceId: string; limit: number; order: OfferOrder; now: Date; maxQueueSeconds?: number },
): Promise<OfferedMessage[]> {
  const { deviceId, limit, order, now } = options;
  const { rows } = await sql.query<{
    id: string;
    to_number: string;
    body: string;
    created_at: Date;
    offered_at: Date | null;
    send_at: Date | null;
    valid_until: Date | null;
    sim_number: number | null;
    priority: number;
    with_delivery_report: boolean;
    is_encrypted: boolean;
  }>(
    `WITH picked AS (
       SELECT m.id, m.to_number, m.body, m.created_at, m.offered_at, m.send_at, m.valid_until, m.sim_number, m.priority, m.with_delivery_report,
              m.is_encrypted
       FROM messages m
       WHERE m.device_id = $1 AND m.state = 'assigned' AND m.cancel_requested_at IS NULL
         AND (m.offered_at IS NOT NULL OR ${beforeQueueDeadline('m', '$4', '$3')})
         AND EXISTS (SELECT 1 FROM devices d WHERE d.id = $1 AND d.enabled AND d.deleted_at IS NULL)
       ORDER BY ${ORDER_BY[order]}
       LIMIT $2
       FOR UPDATE OF m SKIP LOCKED
     ), marked AS (
       UPDATE messages m SET offered_at = $3 FROM picked WHERE m.id = picked.id AND picked.offered_at IS NULL
     ), taking AS (
       -- The device takes messages: the assignment lease leaves the rest of its queue alone.
       UPDATE devices SET offered_at = $3
       WHERE id = $1 AND EXISTS (SELECT 1 FROM picked) AND (offered_at IS NULL OR offered_at < $3 - interval '1 second')
     )
     SELECT * FROM picked ORDER BY ${ORDER_BY[order]}`,
    [deviceId, limit, now, options.maxQueueSeconds ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    to: r.to_number,
    body: r.body,
    createdAt: r.created_at,
    offeredAt: r.offered_at ?? now,
    sendAt: r.send_at,
    validUntil: r.valid_until,
    simNumber: r.sim_number,
    priority: r.priority,
    withDeliveryReport: r.with_delivery_report,
    encrypted: r.is_encrypted,
  }));
}

/**
 * Whether the device acknowledged everything it was offered and has messages it was never offered
 * (more than one pull could take): then it is worth waking again.
 */
export async function readyForMoreOffers(sql: Sql, deviceId: string): Promise<boolean> {
  const { rows } = await sql.query<{ ready: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM messages WHERE device_id = $1 AND ${unclaimedSql('messages')})
        AND NOT EXISTS (SELECT 1 FROM messages WHERE device_id = $1 AND ${unacknowledgedSql('messages')}
                        AND messages.cancel_requested_at IS NULL) AS ready`,
    [deviceId],
  );
  return rows[0]?.ready === true;
}
