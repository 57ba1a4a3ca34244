import { callbackEventSql, type CallbackTarget, type Encoding, type MessageFields, type MessageState, type ReceivedFields, type WebhookEventType } from '@smsgw/core';
import type { Sql } from './sql.ts';

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
  const date = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string));
  return {
    id: data.id as string,
    batchId: (data.batch_id as string | null) ?? null,
    deviceId: (data.device_id as string | null) ?? null,
    requestedDeviceId: (data.requested_device_id as string | null) ?? null,
    to: data.to_number as string,
    body: data.body as string,
    segments: data.segments as number,
    encoding: data.encoding as Encoding,
    state: data.state as MessageState,
    error: (data.error as string | null) ?? null,
    createdAt: new Date(data.created_at as string),
    updatedAt: new Date(data.updated_at as string),
    sentAt: date(data.sent_at),
    deliveredAt: date(data.delivered_at),
    sendAt: date(data.send_at),
    validUntil: date(data.valid_until),
    simNumber: (data.sim_number as number | null | undefined) ?? null,
    attempts: (data.attempts as MessageFields['attempts'] | undefined) ?? [],
    offeredAt: date(data.offered_at),
    failedAt: date(data.failed_at),
  };
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

export interface DeliveryAttempt {
  id: string;
  webhookId: string;
  type: WebhookEventType;
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
}

/** A delivery with what its next attempt needs; null if it (or its endpoint) was deleted. */
export async function loadDeliveryAttempt(sql: Sql, id: string, now: Date): Promise<DeliveryAttempt | null> {
  const { rows } = await sql.query<{
    id: string; webhook_id: string; type: WebhookEventType; occurred_at: Date; data: Record<string, unknown>;
    state: DeliveryAttempt['state']; attempts: number; url: string; enabled: boolean; secret: string;
    previous_secret: string | null; previous_secret_expires_at: Date | null;
    callback_id: string | null; callback_url: string | null; format: string | null; context: Record<string, unknown> | null;
  }>(
    `SELECT d.id, d.webhook_id, d.type, d.occurred_at, d.data, d.state, d.attempts,
            w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at,
            c.id AS callback_id, c.url AS callback_url, c.format, c.context
     FROM webhook_deliveries d
     LEFT JOIN webhooks w ON w.id = d.webhook_id
     LEFT JOIN message_callbacks c ON c.id = d.callback_id
     WHERE d.id = $1 AND (w.id IS NOT NULL OR c.id IS NOT NULL)`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.callback_id !== null) {
    const callback = { url: row.callback_url!, format: row.format as CallbackTarget['format'], context: row.context ?? {} };
    return {
      id: row.id, webhookId: row.callback_id, type: row.type, occurredAt: row.occurred_at, data: row.data, state: row.state,
      attempts: row.attempts, url: callback.url, enabled: true, secrets: [], callback,
    };
  }
  const previousValid = row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    webhookId: row.webhook_id,
    type: row.type,
    occurredAt: row.occurred_at,
    data: row.data,
    state: row.state,
    attempts: row.attempts,
    url: row.url,
    enabled: row.enabled,
    secrets: previousValid ? [row.secret, row.previous_secret!] : [row.secret],
    callback: null,
  };
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
export async function recordDeliveryAttempt(sql: Sql, id: string, result: AttemptResult): Promise<boolean> {
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
  await sql.query(
    `UPDATE webhook_deliveries SET state = 'failed', last_error = $2, next_attempt_at = NULL WHERE id = $1 AND state = 'pending'`,
    [id, error],
  );
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
