import { TEST_EVENT_TYPE, generateWebhookSecret, newId, type TestEventData } from '@smsgw/core';
import type { Db } from './client.ts';

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

/** After a rotation the previous secret keeps signing alongside the new one for this long. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 3600 * 1000;

export const TEST_EVENT_MESSAGE = 'This is a test event from smsgw.';

const webhookColumns = {
  id: true, url: true, events: true, description: true, enabled: true, disabledReason: true, createdAt: true, updatedAt: true,
} as const;

const deliveryColumns = {
  id: true, type: true, messageId: true, state: true, attempts: true, lastStatusCode: true, lastError: true,
  lastAttemptAt: true, nextAttemptAt: true, createdAt: true,
} as const;

/** The user has as many endpoints as allowed already. */
export class WebhookLimitError extends Error {
  override name = 'WebhookLimitError';
}

/** Creates an endpoint with a new secret, unless the user has `limit` endpoints already. */
export async function createWebhook(
  db: Db,
  o: { userId: string; url: string; events: string[]; description?: string; limit: number },
): Promise<{ secret: string; webhook: WebhookRow }> {
  const secret = generateWebhookSecret();
  const now = new Date();
  return db.$transaction(async (tx) => {
    // Locks the user's row so that creations of one user run one at a time and cannot pass the limit together.
    await tx.$queryRaw`SELECT 1 FROM users WHERE id = ${o.userId}::uuid FOR NO KEY UPDATE`;
    if ((await tx.webhook.count({ where: { userId: o.userId } })) >= o.limit) throw new WebhookLimitError();
    const webhook = await tx.webhook.create({
      data: {
        id: newId(), userId: o.userId, url: o.url, events: o.events, description: o.description ?? null,
        secret, createdAt: now, updatedAt: now,
      },
      select: webhookColumns,
    });
    return { secret, webhook };
  });
}

export async function findWebhook(db: Db, o: { userId: string; id: string }): Promise<WebhookRow | null> {
  return db.webhook.findFirst({ where: { id: o.id, userId: o.userId }, select: webhookColumns });
}

export async function listWebhooks(db: Db, o: { userId: string; limit: number; offset: number }): Promise<{ rows: WebhookRow[]; total: number }> {
  const where = { userId: o.userId };
  const [rows, total] = await Promise.all([
    db.webhook.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: webhookColumns }),
    db.webhook.count({ where }),
  ]);
  return { rows, total };
}

/** Changes an endpoint; enabling it clears the reason smsgw disabled it for. */
export async function updateWebhook(
  db: Db,
  o: { userId: string; id: string; url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<WebhookRow | null> {
  const { count } = await db.webhook.updateMany({
    where: { id: o.id, userId: o.userId },
    data: {
      url: o.url,
      events: o.events,
      description: o.description,
      enabled: o.enabled,
      ...(o.enabled === true && { disabledReason: null }),
      updatedAt: new Date(),
    },
  });
  return count === 1 ? findWebhook(db, o) : null;
}

/** Deletes an endpoint and, with it, its deliveries. */
export async function deleteWebhook(db: Db, o: { userId: string; id: string }): Promise<boolean> {
  const { count } = await db.webhook.deleteMany({ where: { id: o.id, userId: o.userId } });
  return count === 1;
}

/**
 * Gives an endpoint a new secret; the old one stays valid for PREVIOUS_SECRET_VALIDITY_MS (one
 * statement, so two rotations at once cannot lose a secret halfway). Null if there is no such endpoint.
 */
export async function rotateWebhookSecret(
  db: Db,
  o: { userId: string; id: string },
): Promise<{ id: string; secret: string; previousSecretExpiresAt: Date } | null> {
  const secret = generateWebhookSecret();
  const now = new Date();
  const previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS);
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE webhooks
    SET previous_secret = secret, secret = ${secret}, previous_secret_expires_at = ${previousSecretExpiresAt}, updated_at = ${now}
    WHERE id = ${o.id}::uuid AND user_id = ${o.userId}::uuid
    RETURNING id`;
  return rows[0] ? { id: rows[0].id, secret, previousSecretExpiresAt } : null;
}

/** An endpoint's deliveries, newest first. */
export async function listWebhookDeliveries(
  db: Db,
  o: { userId: string; webhookId: string; limit: number; offset: number },
): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
  const where = { webhookId: o.webhookId, userId: o.userId };
  const [rows, total] = await Promise.all([
    db.webhookDelivery.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: deliveryColumns }),
    db.webhookDelivery.count({ where }),
  ]);
  return { rows, total };
}

export async function findWebhookDelivery(db: Db, o: { userId: string; webhookId: string; id: string }): Promise<WebhookDeliveryRow | null> {
  return db.webhookDelivery.findFirst({ where: { id: o.id, webhookId: o.webhookId, userId: o.userId }, select: deliveryColumns });
}

/** A `webhook.test` delivery to the endpoint, due now. */
export async function createTestDelivery(db: Db, o: { userId: string; webhookId: string }): Promise<WebhookDeliveryRow> {
  const now = new Date();
  const data: TestEventData = { webhook_id: o.webhookId, message: TEST_EVENT_MESSAGE };
  return db.webhookDelivery.create({
    data: {
      id: newId(), webhookId: o.webhookId, userId: o.userId, type: TEST_EVENT_TYPE, occurredAt: now, data: { ...data },
      state: 'pending', nextAttemptAt: now, createdAt: now,
    },
    select: deliveryColumns,
  });
}

/** Makes a delivery pending and due now, whatever its state; its attempts keep counting. Null if there is no such delivery. */
export async function retryWebhookDelivery(db: Db, o: { userId: string; webhookId: string; id: string }): Promise<WebhookDeliveryRow | null> {
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: o.id, webhookId: o.webhookId, userId: o.userId },
    data: { state: 'pending', nextAttemptAt: new Date() },
  });
  return count === 1 ? findWebhookDelivery(db, o) : null;
}
