import { RECIPIENT_OPTED_OUT, type AvailabilityWindows, type DeviceProtocol } from '@smsgw/core';
import { availableDeviceCondition } from './availability.ts';
import type { NewMessages } from './messages.ts';
import type { Queryable } from './sql.ts';
import { webhookEventsCte, type DeliveryRef } from './webhook-deliveries.ts';

export interface QuotaCharge {
  period: Date;
  limit: number;
}

/**
 * The devices a send needs (decisions.md, "Sending"): the named device, enabled; and, with
 * `windows`, an available one (the named device, else any of the user's).
 */
export interface DeviceGate {
  deviceId: string | null;
  windows: AvailabilityWindows | null;
  /** Store the send even when no device is available now (it waits for one, as Kannel queues); `device` still says `unavailable`. */
  queueWhenUnavailable?: boolean;
  /**
   * Only devices of these protocols may take the send (an encrypted one: those with `encryptedMessages`):
   * a named device of another is `wrong_protocol`, a user with none at all (deleted ones aside) `no_protocol`.
   */
  protocols?: readonly DeviceProtocol[];
}

/**
 * What a send found: `missing` (the named device is not the user's or not enabled), `wrong_protocol`
 * and `no_protocol` (see `DeviceGate.protocols`), `unavailable` (no device to send with now, while
 * some recipient has not opted out).
 * `optedOut` are the messages stored failed at once (their recipient opted out), with the
 * deliveries of their `message.failed` events.
 */
export interface StoredSend {
  device: 'ok' | 'missing' | 'wrong_protocol' | 'no_protocol' | 'unavailable';
  charged: boolean;
  optedOut: string[];
  deliveries: DeliveryRef[];
}

/**
 * Stores a send in one statement, so that it is atomic without a transaction and costs one round
 * trip whatever the number of recipients: the device check, the opt-out list, the quota charge (a
 * conditional upsert of the month's row), the batch and every message (one `unnest` insert).
 * Nothing is stored unless the devices are there (none is needed when every recipient opted out)
 * and the charge stays within `limit`. A message to an opted-out recipient is stored `failed` at once, with its
 * `message.failed` event, and is not charged (docs/decisions.md, "Opt-out"). Without `charge` and
 * `gate`, the rows are stored unconditionally (the benchmark's floor).
 */
export async function storeSend(q: Queryable, m: NewMessages, charge: QuotaCharge | null, gate: DeviceGate | null = null): Promise<StoredSend> {
  const params: unknown[] = [
    m.userId,
    m.batch?.id ?? null,
    m.batch?.recipientsCount ?? null,
    m.requestedDeviceId,
    m.createdAt,
    m.sendAt ?? null,
    m.validUntil ?? null,
    m.simNumber ?? null,
    m.ids,
    m.recipients,
    m.batch?.externalId ?? null,
    m.priority ?? 0,
    m.withDeliveryReport ?? true,
    m.callback?.id ?? null,
    m.encrypted ?? false,
  ];
  const p = (value: unknown) => `$${params.push(value)}`;
  const rows =
    m.texts.kind === 'same'
      ? `SELECT t.id, t.to_number, ${p(m.texts.body)}::text, ${p(m.texts.segments)}::int, ${p(m.texts.encoding)}::message_encoding
           FROM unnest($9::uuid[], $10::text[]) AS t(id, to_number)`
      : `SELECT t.id, t.to_number, t.body, t.segments, t.encoding::message_encoding
           FROM unnest($9::uuid[], $10::text[], ${p(m.texts.bodies)}::text[], ${p(m.texts.segments)}::int[], ${p(m.texts.encodings)}::text[])
             AS t(id, to_number, body, segments, encoding)`;
  const available = (d: string) =>
    gate?.windows
      ? availableDeviceCondition(d, {
          stream: `${p(gate.windows.streamSince)}::timestamptz`,
          closed: `${p(gate.windows.closedSince)}::timestamptz`,
          request: `${p(gate.windows.requestSince)}::timestamptz`,
        })
      : 'true';
  const protocol = gate?.protocols ? p(gate.protocols) : null;
  const ofProtocol = (d: string) => (protocol ? `${d}.protocol = ANY(${protocol}::device_protocol[])` : 'true');
  let device = `'ok'`;
  if (gate?.deviceId) {
    device = `coalesce((SELECT CASE WHEN NOT d.enabled THEN 'missing' WHEN NOT ${ofProtocol('d')} THEN 'wrong_protocol'
                   WHEN ${available('d')} THEN 'ok' ELSE 'unavailable' END
                 FROM devices d WHERE d.id = ${p(gate.deviceId)}::uuid AND d.user_id = $1 AND d.deleted_at IS NULL), 'missing')`;
  } else if (protocol || gate?.windows) {
    const some = (condition: string) => `EXISTS (SELECT 1 FROM devices d WHERE d.user_id = $1 AND ${ofProtocol('d')} AND ${condition})`;
    // With windows, an available device (of the protocol); without (a scheduled send), a device of the protocol at all.
    const none = protocol ? `WHEN NOT ${some('d.deleted_at IS NULL')} THEN 'no_protocol'` : '';
    device = `CASE ${none} WHEN ${gate?.windows ? some(available('d')) : 'true'} THEN 'ok' ELSE 'unavailable' END`;
  }
  // Whether the devices let the send be stored.
  const passes = gate?.queueWhenUnavailable ? `(SELECT device FROM gate) IN ('ok', 'unavailable')` : `(SELECT device FROM gate) = 'ok'`;
  let charged = `SELECT 1 WHERE ${passes}`;
  if (charge) {
    const [count, limit] = ['(SELECT count FROM charged_count)', p(charge.limit)];
    charged = `INSERT INTO quota_usage (user_id, period, used)
      SELECT $1::uuid, ${p(charge.period)}::date, ${count}::int WHERE ${count}::int <= ${limit}::int AND ${passes}
      ON CONFLICT (user_id, period) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
        WHERE quota_usage.used + EXCLUDED.used <= ${limit}::int
      RETURNING 1`;
  }
  const failure = p(RECIPIENT_OPTED_OUT);
  const { rows: result } = await q.query<StoredSend>(
    // An encrypted recipient is no phone number: no opt-out can name it.
    `WITH opted AS (SELECT phone FROM opt_outs WHERE user_id = $1::uuid AND phone = ANY($10::text[]) AND NOT $15::boolean),
     charged_count AS (SELECT (cardinality($9::uuid[]) - (SELECT count(*) FROM opted))::int AS count),
     gate AS (
       SELECT CASE WHEN g.device = 'unavailable' AND (SELECT count FROM charged_count) = 0 THEN 'ok' ELSE g.device END AS device
       FROM (SELECT ${device} AS device) g
     ),
     charged AS (${charged}),
     callback AS (${callbackInsert(m, p)}),
     batch AS (
       INSERT INTO batches (id, user_id, recipients_count, created_at, external_id)
       SELECT $2::uuid, $1::uuid, $3::int, $5::timestamptz, $11::varchar WHERE $2::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM charged)
     ),
     stored AS (
       INSERT INTO messages (id, to_number, body, segments, encoding, user_id, batch_id, requested_device_id, created_at, updated_at,
                             send_at, valid_until, sim_number, priority, with_delivery_report, callback_id, is_encrypted)
       SELECT m.*, $1::uuid, $2::uuid, $4::uuid, $5::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::smallint,
              $12::smallint, $13::boolean, $14::uuid, $15::boolean
         FROM (${rows}) AS m WHERE EXISTS (SELECT 1 FROM charged) AND m.to_number NOT IN (SELECT phone FROM opted)
     ),
     moved AS (
       INSERT INTO messages AS s (id, to_number, body, segments, encoding, user_id, batch_id, requested_device_id, created_at, updated_at,
                             send_at, valid_until, sim_number, priority, with_delivery_report, callback_id, state, failed_at, error)
       SELECT m.*, $1::uuid, $2::uuid, $4::uuid, $5::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::smallint,
              $12::smallint, $13::boolean, $14::uuid, 'failed', $5::timestamptz, ${failure}::text
         FROM (${rows}) AS m WHERE EXISTS (SELECT 1 FROM charged) AND m.to_number IN (SELECT phone FROM opted)
       RETURNING s.id, s.user_id, s.device_id, s.failed_at AS at, s.error, to_jsonb(s) AS snapshot
     ),
     history AS (INSERT INTO message_events (message_id, state, device_id, at, detail) SELECT id, 'failed', NULL, at, error FROM moved),
     ${webhookEventsCte(p(['message.failed']), 'callback')}
     SELECT (SELECT device FROM gate) AS device, EXISTS (SELECT 1 FROM charged) AS charged,
       ARRAY(SELECT id FROM moved) AS "optedOut",
       coalesce((SELECT json_agg(json_build_object('id', id, 'webhookId', webhook_id)) FROM hooks), '[]'::json) AS deliveries`,
    params,
  );
  return result[0]!;
}

/**
 * The insert of the send's callback, one row whatever the number of recipients (none without a
 * callback); it returns what `webhookEventsCte` reads of a callback.
 */
function callbackInsert(m: NewMessages, p: (value: unknown) => string): string {
  if (!m.callback) return `SELECT NULL::uuid AS id, NULL::text[] AS events WHERE false`;
  const { url, format, events, context } = m.callback;
  return `INSERT INTO message_callbacks (id, user_id, url, format, events, context, created_at)
       SELECT $14::uuid, $1::uuid, ${p(url)}::text, ${p(format)}::text, ${p(events)}::text[], ${p(JSON.stringify(context))}::jsonb, $5::timestamptz
       WHERE EXISTS (SELECT 1 FROM charged) RETURNING id, events`;
}
