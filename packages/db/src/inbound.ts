import { inboundOptOutAction } from '@smsgw/core';
import type { Sql } from './sql.ts';
import { stickyFromReceivedCte } from './sticky-senders.ts';
import { twilioIncomingCte, twilioSmsUrlSql } from './twilio-incoming.ts';
import { TRANSITIONED_SELECT, toTransitioned, webhookEventsCte, type Transitioned } from './webhook-deliveries.ts';

/**
 * Incoming SMS (real-devices.md §3, §4), from either device protocol: stored once per device and
 * dedup key, with the `message.received` webhook events written by the same statement (none for a
 * repeat, which inserts nothing). The same statement applies opt-out keywords (STOP adds the
 * sender to the user's opt-out list, START takes it off; the latest of a batch wins per sender),
 * while the user keeps `opt_out_keywords` on, and remembers the receiving device as the sender's
 * sticky one while `sticky_sender` is on. An SMS that arrives on a device (or SIM) with a Twilio
 * incoming-SMS URL gets a callback of its own in that format, with its delivery (twilioIncomingCte).
 */
export interface InboundSms {
  id: string;
  from: string;
  to: string | null;
  body: string;
  simNumber: number | null;
  receivedAt: Date;
  /** What identifies a repeat of this SMS from the same device; null stores it every time. */
  dedupKey: string | null;
}

/** Stores the SMS; `moved` are the ids stored now (repeats are left out), with their webhook deliveries. */
export async function storeInbound(sql: Sql, options: { userId: string; deviceId: string; messages: InboundSms[]; now: Date }): Promise<Transitioned> {
  const { messages } = options;
  if (messages.length === 0) return { moved: [], deliveries: [] };
  const { rows } = await sql.query<{ kind: string; id: string; webhook_id: string | null }>(
    `WITH input AS (
       SELECT t.*, url.twilio_url, CASE WHEN url.twilio_url IS NOT NULL THEN gen_random_uuid() END AS callback_id
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::text[], $12::text[])
         AS t(id, from_number, to_number, body, sim_number, received_at, dedup_key, opt_out)
       LEFT JOIN LATERAL (${twilioSmsUrlSql('$9', 't.sim_number')}) url ON true
     ), moved AS (
       INSERT INTO received_messages AS r (id, user_id, device_id, from_number, to_number, body, sim_number, received_at, created_at, dedup_key, callback_id)
       SELECT id, $8, $9, from_number, to_number, body, sim_number, received_at, $10, dedup_key, callback_id FROM input
       ON CONFLICT (device_id, dedup_key) DO NOTHING
       RETURNING r.id, r.user_id, r.created_at AS at, to_jsonb(r) AS snapshot, r.from_number, r.sim_number, r.received_at, r.callback_id, r.to_number
     ), ${twilioIncomingCte('$9', '$10')}, keyword AS (
       SELECT DISTINCT ON (moved.from_number) moved.from_number AS phone, input.opt_out AS action
       FROM moved JOIN input ON input.id = moved.id
       WHERE input.opt_out IS NOT NULL AND (SELECT opt_out_keywords FROM users WHERE id = $8::uuid)
       ORDER BY moved.from_number, moved.received_at DESC, moved.id DESC
     ), opted_out AS (
       INSERT INTO opt_outs (user_id, phone, source, created_at) SELECT $8, phone, 'keyword', $10 FROM keyword WHERE action = 'opt_out'
       ON CONFLICT (user_id, phone) DO NOTHING
     ), opted_in AS (
       DELETE FROM opt_outs o USING keyword k WHERE o.user_id = $8::uuid AND o.phone = k.phone AND k.action = 'opt_in'
     ), ${stickyFromReceivedCte('$8', '$9', '$10')},
     ${webhookEventsCte('$11')}
     ${TRANSITIONED_SELECT}
     UNION ALL SELECT 'delivery', id, callback_id FROM twilio_hooks`,
    [
      messages.map((m) => m.id),
      messages.map((m) => m.from),
      messages.map((m) => m.to),
      messages.map((m) => m.body),
      messages.map((m) => m.simNumber),
      messages.map((m) => m.receivedAt),
      messages.map((m) => m.dedupKey),
      options.userId,
      options.deviceId,
      options.now,
      ['message.received'],
      messages.map((m) => inboundOptOutAction(m)),
    ],
  );
  return toTransitioned(rows);
}
