import { TEST_EVENT_TYPE, generateWebhookSecret, newId, type TestEventData } from '@smsgw/core';
import { assignments, Params, type SqlPool } from './sql.ts';
import { inTransaction, type Queryable } from './sql.ts';

/**
 * The user's webhook endpoints and their deliveries, as the API shows them. The secret is read
 * nowhere here: it is returned once by `createWebhook` and `rotateWebhookSecret`, and only the
 * dispatcher reads it to sign (`loadDeliveryAttempt`).
 */

export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookDeliveryRow {
  id: string;
  type: string;
  messageId: string | null;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/**
 * The endpoints this API manages: smsgw's own format. SMS Gate-format endpoints share the table (and
 * the user's limit) but are managed on /3rdparty/v1/webhooks only (sms-gate-webhooks.ts), so that
 * nothing here can give them events, a URL or a secret of smsgw's format.
 */
const OWN = 'smsgw';

/** After a rotation the previous secret keeps signing alongside the new one for this long. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 3600 * 1000;

export const TEST_EVENT_MESSAGE = 'This is a test event from smsgw.';

const WEBHOOK_COLUMNS = `w.id, w.url, w.events, w.description, w.enabled, w.disabled_reason AS "disabledReason", w.created_at AS "createdAt",
  w.updated_at AS "updatedAt"`;

const DELIVERY_COLUMNS = `d.id, d.type, d.message_id AS "messageId", d.state::text AS state, d.attempts, d.last_status_code AS "lastStatusCode",
  d.last_error AS "lastError", d.last_attempt_at AS "lastAttemptAt", d.next_attempt_at AS "nextAttemptAt", d.created_at AS "createdAt"`;

/** The deliveries of one of the user's own endpoints: `d` joined to its webhook `w`, $1 the user, $2 the endpoint. */
const OWN_DELIVERIES = `webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.format = '${OWN}'
  WHERE d.user_id = $1 AND d.webhook_id = $2`;

/** The user has as many endpoints as allowed already. */
export class WebhookLimitError extends Error {
  override name = 'WebhookLimitError';
}

/** Creates an endpoint with a new secret, unless the user has `limit` endpoints already. */
export async function createWebhook(
  sql: SqlPool,
  o: { userId: string; url: string; events: string[]; description?: string; limit: number },
): Promise<{ secret: string; webhook: WebhookRow }> {
  const secret = generateWebhookSecret();
  return inTransaction(sql, async (tx) => {
    // Locks the user's row so that creations of one user run one at a time and cannot pass the limit together.
    await lockUserWithin(tx, o.userId, o.limit);
    const { rows } = await tx.query<WebhookRow>(
      `INSERT INTO webhooks AS w (id, user_id, url, events, description, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       RETURNING ${WEBHOOK_COLUMNS}`,
      [newId(), o.userId, o.url, o.events, o.description ?? null, secret, new Date()],
    );
    return { secret, webhook: rows[0]! };
  });
}

/**
 * Locks the user's row for the rest of the transaction (registrations of one user run one at a
 * time), then refuses a new endpoint when the user has `limit` of any format already.
 */
export async function lockUserWithin(tx: Queryable, userId: string, limit: number): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE user_id = $1', [userId]);
  if (rows[0]!.n >= limit) throw new WebhookLimitError();
}

export async function findWebhook(sql: SqlPool, o: { userId: string; id: string }): Promise<WebhookRow | null> {
  const { rows } = await sql.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks w WHERE w.id = $1 AND w.user_id = $2 AND w.format = '${OWN}'`, [
    o.id,
    o.userId,
  ]);
  return rows[0] ?? null;
}

export async function listWebhooks(sql: SqlPool, o: { userId: string; limit: number; offset: number }): Promise<{ rows: WebhookRow[]; total: number }> {
  const where = `w.user_id = $1 AND w.format = '${OWN}'`;
  const [{ rows }, count] = await Promise.all([
    sql.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks w WHERE ${where} ORDER BY w.created_at DESC, w.id DESC LIMIT $2 OFFSET $3`, [
      o.userId,
      o.limit,
      o.offset,
    ]),
    sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks w WHERE ${where}`, [o.userId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** Changes an endpoint; enabling it clears the reason smsgw disabled it for. */
export async function updateWebhook(
  sql: SqlPool,
  o: { userId: string; id: string; url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<WebhookRow | null> {
  const p = new Params();
  const set = assignments(p, {
    url: o.url,
    events: o.events,
    description: o.description,
    enabled: o.enabled,
    disabled_reason: o.enabled === true ? null : undefined,
    updated_at: new Date(),
  });
  const { rows } = await sql.query<WebhookRow>(
    `UPDATE webhooks w SET ${set} WHERE w.id = ${p.add(o.id)} AND w.user_id = ${p.add(o.userId)} AND w.format = '${OWN}' RETURNING ${WEBHOOK_COLUMNS}`,
    p.values,
  );
  return rows[0] ?? null;
}

/** Deletes an endpoint and, with it, its deliveries. */
export async function deleteWebhook(sql: SqlPool, o: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query(`DELETE FROM webhooks WHERE id = $1 AND user_id = $2 AND format = '${OWN}'`, [o.id, o.userId]);
  return rowCount === 1;
}

/**
 * Gives an endpoint a new secret; the old one stays valid for PREVIOUS_SECRET_VALIDITY_MS (one
 * statement, so two rotations at once cannot lose a secret halfway). Null if there is no such endpoint.
 */
export async function rotateWebhookSecret(
  sql: SqlPool,
  o: { userId: string; id: string },
): Promise<{ id: string; secret: string; previousSecretExpiresAt: Date } | null> {
  const secret = generateWebhookSecret();
  const now = new Date();
  const previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS);
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE webhooks SET previous_secret = secret, secret = $3, previous_secret_expires_at = $4, updated_at = $5
      WHERE id = $1 AND user_id = $2 AND format = '${OWN}'
      RETURNING id`,
    [o.id, o.userId, secret, previousSecretExpiresAt, now],
  );
  return rows[0] ? { id: rows[0].id, secret, previousSecretExpiresAt } : null;
}

/** An endpoint's deliveries, newest first. */
export async function listWebhookDeliveries(
  sql: SqlPool,
  o: { userId: string; webhookId: string; limit: number; offset: number },
): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<WebhookDeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM ${OWN_DELIVERIES} ORDER BY d.created_at DESC, d.id DESC LIMIT $3 OFFSET $4`, [
      o.userId,
      o.webhookId,
      o.limit,
      o.offset,
    ]),
    sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${OWN_DELIVERIES}`, [o.userId, o.webhookId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function findWebhookDelivery(sql: SqlPool, o: { userId: string; webhookId: string; id: string }): Promise<WebhookDeliveryRow | null> {
  const { rows } = await sql.query<WebhookDeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM ${OWN_DELIVERIES} AND d.id = $3`, [o.userId, o.webhookId, o.id]);
  return rows[0] ?? null;
}

/** A `webhook.test` delivery to the endpoint, due now. */
export async function createTestDelivery(sql: SqlPool, o: { userId: string; webhookId: string }): Promise<WebhookDeliveryRow> {
  const now = new Date();
  const data: TestEventData = { webhook_id: o.webhookId, message: TEST_EVENT_MESSAGE };
  const { rows } = await sql.query<WebhookDeliveryRow>(
    `INSERT INTO webhook_deliveries AS d (id, webhook_id, user_id, type, occurred_at, data, state, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending', $5, $5) RETURNING ${DELIVERY_COLUMNS}`,
    [newId(), o.webhookId, o.userId, TEST_EVENT_TYPE, now, JSON.stringify(data)],
  );
  return rows[0]!;
}

/** Makes a delivery pending and due now, whatever its state; its attempts keep counting. Null if there is no such delivery. */
export async function retryWebhookDelivery(sql: SqlPool, o: { userId: string; webhookId: string; id: string }): Promise<WebhookDeliveryRow | null> {
  const { rows } = await sql.query<WebhookDeliveryRow>(
    `UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = $4
       FROM webhooks w WHERE w.id = d.webhook_id AND w.format = '${OWN}' AND d.user_id = $1 AND d.webhook_id = $2 AND d.id = $3
     RETURNING ${DELIVERY_COLUMNS}`,
    [o.userId, o.webhookId, o.id, new Date()],
  );
  return rows[0] ?? null;
}
