import {
  callbackEventSql,
  messageFromRow,
  type CallbackLoaded,
  type CallbackTarget,
  type EngineEventType,
  type MessageColumns,
  type MessageFields,
  type ReceivedFields,
} from '@smsgw/core';
import { senderNumberSql } from './sender-number.ts';
import { unitRefSql } from './send-units.ts';
import { SMS_GATE_SIGNING_KEY_SQL } from './sms-gate-settings.ts';
import type { Sql } from './sql.ts';
import type { Queryable } from './sql.ts';

/**
 * The webhook statements of the dispatcher: events written by the transitions' own statements, and
 * the attempts of each delivery. A delivery row is its own outbox: `next_attempt_at` is set while
 * it is pending and null once it succeeded or failed for good.
 */

/**
 * The part of a transition statement that writes its webhook events: one delivery per enabled
 * endpoint of the message's user that subscribed to the type, and one to the message's callback
 * (`callback_id` in the snapshot) when its events select it. `moved` must return `id`, `user_id`,
 * `at` (when the transition happened) and `snapshot` (`to_jsonb` of the updated row); `types` is
 * the SQL of a `text[]` parameter; `callbacks` is where the callbacks are read (a statement that
 * stores a callback passes its own CTE, which the table does not show yet). Add `hooks` to the
 * statement's WITH list; it returns the ids of the deliveries to enqueue, with their endpoint's
 * id or, for a callback, the callback's (the key of its slots).
 */
export function webhookEventsCte(types: string, callbacks = 'message_callbacks'): string {
  return `hooks AS (
       INSERT INTO webhook_deliveries (id, webhook_id, callback_id, user_id, type, message_id, occurred_at, data)
       SELECT gen_random_uuid(), w.id, NULL::uuid, w.user_id, e.type, moved.id, moved.at, moved.snapshot
       FROM moved
       JOIN webhooks w ON w.user_id = moved.user_id AND w.enabled
       CROSS JOIN unnest(${types}::text[]) AS e(type)
       WHERE e.type = ANY(w.events)
         AND (w.device_id IS NULL OR w.device_id = ${snapshotDeviceSql('moved.snapshot')})
       UNION ALL
       SELECT gen_random_uuid(), NULL::uuid, c.id, moved.user_id, e.type, moved.id, moved.at, moved.snapshot
       FROM moved
       JOIN ${callbacks} c ON c.id = (moved.snapshot->>'callback_id')::uuid
       CROSS JOIN unnest(${types}::text[]) AS e(type)
       WHERE (${callbackEventSql('e.type', 'moved.snapshot')}) = ANY(c.events)
       RETURNING id, coalesce(webhook_id, callback_id) AS webhook_id
     )`;
}

/**
 * The device of an event's snapshot, for an endpoint's device filter (SMS Gate's `deviceId`): the
 * message's device, else the one named at send; the receiving device of a received SMS.
 */
const snapshotDeviceSql = (snapshot: string) => `coalesce(${snapshot}->>'device_id', ${snapshot}->>'requested_device_id')::uuid`;

/**
 * A delivery to enqueue: its id and its endpoint's, or its callback's for a callback delivery (the
 * worker takes that endpoint's slot before anything else).
 */
export interface DeliveryRef {
  id: string;
  webhookId: string;
}

/** What a transition statement with webhook events returns: the rows it moved and the deliveries it wrote. */
export interface Transitioned {
  moved: string[];
  deliveries: DeliveryRef[];
}

/** The final SELECT of a statement with `moved` and `hooks`. */
export const TRANSITIONED_SELECT = `SELECT 'moved' AS kind, id, NULL::uuid AS webhook_id FROM moved
     UNION ALL SELECT 'delivery', id, webhook_id FROM hooks`;

export function toTransitioned(rows: { kind: string; id: string; webhook_id: string | null }[]): Transitioned {
  const result: Transitioned = { moved: [], deliveries: [] };
  for (const row of rows) {
    if (row.kind === 'moved') result.moved.push(row.id);
    else result.deliveries.push({ id: row.id, webhookId: row.webhook_id! });
  }
  return result;
}

/** The message as the transition left it, from the row `to_jsonb` stored in the delivery. */
export function messageFromSnapshot(data: Record<string, unknown>): MessageFields {
  return messageFromRow(data as unknown as MessageColumns);
}

/** The received SMS as stored, from the row `to_jsonb` stored in the delivery. */
export function receivedFromSnapshot(data: Record<string, unknown>): ReceivedFields {
  return {
    id: data.id as string,
    deviceId: data.device_id as string,
    from: data.from_number as string,
    to: (data.to_number as string | null) ?? null,
    body: data.body as string,
    simNumber: (data.sim_number as number | null) ?? null,
    receivedAt: new Date(data.received_at as string),
    createdAt: new Date(data.created_at as string),
  };
}

/** What an SMS Gate-format endpoint's delivery needs besides the event (webhook-formats/sms-gate.ts). */
export interface SmsGateTarget {
  /** The endpoint's id as its client knows it. */
  clientId: string;
  /** The account's `webhooks.signing_key` now (null: none set: the request goes unsigned). */
  signingKey: string | null;
  /** For a message event: the SMS Gate id of the message's send. */
  messageId: string | null;
}

export interface DeliveryAttempt {
  id: string;
  webhookId: string;
  type: EngineEventType;
  occurredAt: Date;
  data: Record<string, unknown>;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  url: string;
  enabled: boolean;
  /** The secrets that sign: the current one, and the previous one while it is valid. */
  secrets: string[];
  /** For a delivery to a send's callback: where and how (then `webhookId` is the callback's id, `secrets` empty). */
  callback: CallbackTarget | null;
  /** What a callback's renderer needs, read now (the current signing key, the sender's number); nulls for an endpoint's delivery. */
  loaded: CallbackLoaded;
  /** For an SMS Gate-format endpoint: how to render and sign it (then `secrets` is empty). */
  smsGate: SmsGateTarget | null;
}

/** The sender's number of the message in a delivery's snapshot (`d.data`), as the Message resource reads it. */
const SNAPSHOT_SENDER = senderNumberSql({
  deviceId: "(d.data->>'device_id')::uuid",
  requestedDeviceId: "(d.data->>'requested_device_id')::uuid",
  simNumber: "(d.data->>'sim_number')::int",
});

/** A delivery with what its next attempt needs; null if it (or its endpoint) was deleted. */
export async function loadDeliveryAttempt(sql: Sql, id: string, now: Date): Promise<DeliveryAttempt | null> {
  const { rows } = await sql.query<{
    id: string;
    webhook_id: string;
    type: EngineEventType;
    occurred_at: Date;
    data: Record<string, unknown>;
    state: DeliveryAttempt['state'];
    attempts: number;
    url: string;
    enabled: boolean;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Date | null;
    callback_id: string | null;
    callback_url: string | null;
    format: string | null;
    context: Record<string, unknown> | null;
    signing_key: string | null;
    sender_number: string | null;
    endpoint_format: string | null;
    client_id: string | null;
    sms_gate_key: string | null;
    unit_ref: string | null;
  }>(
    // A Twilio callback is signed with the account's Auth Token as it is now: a rotation applies to
    // every callback sent after it, including those of earlier sends. So is an SMS Gate-format
    // endpoint's delivery with the account's SMS Gate signing key as it is now.
    `SELECT d.id, d.webhook_id, d.type, d.occurred_at, d.data, d.state, d.attempts,
            w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at,
            c.id AS callback_id, c.url AS callback_url, c.format, c.context, t.auth_token AS signing_key,
            CASE WHEN c.id IS NOT NULL THEN ${SNAPSHOT_SENDER} END AS sender_number,
            w.format AS endpoint_format, w.client_id, ${SMS_GATE_SIGNING_KEY_SQL('s')} AS sms_gate_key,
            CASE WHEN d.data ? 'batch_id' THEN ${unitRefSql('b', "d.data->>'id'")} END AS unit_ref
     FROM webhook_deliveries d
     LEFT JOIN webhooks w ON w.id = d.webhook_id
     LEFT JOIN message_callbacks c ON c.id = d.callback_id
     LEFT JOIN twilio_accounts t ON c.format = 'twilio' AND t.user_id = c.user_id
     LEFT JOIN sms_gate_settings s ON w.format = 'sms_gate' AND s.user_id = w.user_id
     LEFT JOIN batches b ON w.format = 'sms_gate' AND b.id = (d.data->>'batch_id')::uuid
     WHERE d.id = $1 AND (w.id IS NOT NULL OR c.id IS NOT NULL)`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  // What every kind shares; a per-send callback, an SMS Gate-format webhook and smsgw's own differ below.
  const common = {
    id: row.id,
    type: row.type,
    occurredAt: row.occurred_at,
    data: row.data,
    state: row.state,
    attempts: row.attempts,
    secrets: [] as string[],
    callback: null,
    loaded: { signingKey: null, senderNumber: null },
    smsGate: null,
  };
  if (row.callback_id !== null) {
    const callback = { url: row.callback_url!, format: row.format as CallbackTarget['format'], context: row.context ?? {} };
    return {
      ...common,
      webhookId: row.callback_id,
      url: callback.url,
      enabled: true,
      callback,
      loaded: { signingKey: row.signing_key, senderNumber: row.sender_number },
    };
  }
  const webhook = { ...common, webhookId: row.webhook_id, url: row.url, enabled: row.enabled };
  if (row.endpoint_format === 'sms_gate') {
    return { ...webhook, smsGate: { clientId: row.client_id!, signingKey: row.sms_gate_key, messageId: row.unit_ref } };
  }
  const previousValid = row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > now;
  return { ...webhook, secrets: previousValid ? [row.secret, row.previous_secret!] : [row.secret] };
}

export interface AttemptResult {
  /** succeeded: 2xx; retry: try again at `nextAttemptAt`; failed: given up. */
  outcome: 'succeeded' | 'retry' | 'failed';
  statusCode: number | null;
  error: string | null;
  at: Date;
  nextAttemptAt: Date | null;
}

/** Records one attempt of a pending delivery; false if it was no longer pending. */
export async function recordDeliveryAttempt(sql: Queryable, id: string, result: AttemptResult): Promise<boolean> {
  const state = result.outcome === 'retry' ? 'pending' : result.outcome;
  const { rowCount } = await sql.query(
    `UPDATE webhook_deliveries
     SET attempts = attempts + 1, state = $2::webhook_delivery_state, last_status_code = $3, last_error = $4,
         last_attempt_at = $5, next_attempt_at = $6
     WHERE id = $1 AND state = 'pending'`,
    [id, state, result.statusCode, result.error, result.at, result.outcome === 'retry' ? result.nextAttemptAt : null],
  );
  return rowCount === 1;
}

/** Ends a pending delivery without an attempt (its endpoint is disabled). */
export async function abandonDelivery(sql: Sql, id: string, error: string): Promise<void> {
  await sql.query(`UPDATE webhook_deliveries SET state = 'failed', last_error = $2, next_attempt_at = NULL WHERE id = $1 AND state = 'pending'`, [id, error]);
}

/** Disables an endpoint on smsgw's own decision (410 Gone), with the reason shown to the user. */
export async function disableWebhook(sql: Sql, webhookId: string, reason: string, now: Date): Promise<void> {
  await sql.query(`UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`, [webhookId, reason, now]);
}

/**
 * Deliveries parked behind a busy endpoint: each is attempted as soon as a slot frees, and counts
 * as overdue (for the outbox sweep) only after `until`. A delivery that a slot holder attempted
 * after it was parked (at `parkedAt`) keeps the schedule that attempt gave it: the park, written
 * in batches, may come after the attempt.
 */
export async function parkDeliveries(sql: Sql, parked: { id: string; parkedAt: Date }[], until: Date): Promise<void> {
  if (parked.length === 0) return;
  await sql.query(
    `UPDATE webhook_deliveries d SET next_attempt_at = $3
     FROM unnest($1::uuid[], $2::timestamptz[]) AS p(id, parked_at)
     WHERE d.id = p.id AND d.state = 'pending' AND d.next_attempt_at < $3
       AND (d.last_attempt_at IS NULL OR d.last_attempt_at < p.parked_at)`,
    [parked.map((p) => p.id), parked.map((p) => p.parkedAt), until],
  );
}

export interface OverdueCursor {
  nextAttemptAt: Date;
  id: string;
}

/**
 * Pending deliveries whose attempt is overdue by `before`, a page at a time after `after`: their
 * job may have been lost.
 */
export async function overdueDeliveries(
  sql: Sql,
  options: { before: Date; limit: number; after?: OverdueCursor },
): Promise<{ deliveries: DeliveryRef[]; next: OverdueCursor | undefined }> {
  const after = options.after ?? { nextAttemptAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
  const { rows } = await sql.query<{ id: string; webhook_id: string; next_attempt_at: Date }>(
    `SELECT id, coalesce(webhook_id, callback_id) AS webhook_id, next_attempt_at FROM webhook_deliveries
     WHERE next_attempt_at < $1 AND state = 'pending' AND (next_attempt_at, id) > ($2, $3::uuid)
     ORDER BY next_attempt_at, id LIMIT $4`,
    [options.before, after.nextAttemptAt, after.id, options.limit],
  );
  const last = rows.at(-1);
  return {
    deliveries: rows.map((r) => ({ id: r.id, webhookId: r.webhook_id })),
    next: last && rows.length === options.limit ? { nextAttemptAt: last.next_attempt_at, id: last.id } : undefined,
  };
}
