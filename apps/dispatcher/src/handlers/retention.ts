import type { DispatcherConfig } from '@smsgw/config';
import {
  IDEMPOTENCY_KEY_RETENTION_MS,
  purgeDevicePairings,
  purgeScopedTokens,
  purgeIdempotencyKeys,
  purgeMessageEvents,
  purgeMessages,
  purgeReceivedMessages,
  purgeWebhookDeliveries,
  type Sql,
} from '@smsgw/db/sql';

/** Rows one statement of the sweep touches at most. */
export const PAGE = 1000;
// Bounds one sweep's work of each kind; what is left is taken by the next sweep.
export const MAX_PAGES = 50;
// Pairings are kept a day after they expire, so that a late attempt is told the code expired.
const PAIRING_RETENTION_SECONDS = 86400;
const DAY_SECONDS = 86400;

export interface RetentionResult {
  idempotencyKeysPurged: number;
  webhookDeliveriesPurged: number;
  pairingsPurged: number;
  scopedTokensPurged: number;
  messagesPurged: number;
  messageEventsPurged: number;
  receivedPurged: number;
}

/**
 * Deletes what has served its time (docs/operations.md, "Retention"), a page of at most
 * PAGE rows per statement so that no statement holds many locks or runs long. A
 * setting of 0 days keeps that kind for ever.
 */
export async function applyRetention(sql: Sql, config: DispatcherConfig, now: Date): Promise<RetentionResult> {
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const limit = PAGE;
  return {
    idempotencyKeysPurged: await pages(() => purgeIdempotencyKeys(sql, { createdBefore: new Date(now.getTime() - IDEMPOTENCY_KEY_RETENTION_MS), limit })),
    webhookDeliveriesPurged: await pages(() =>
      purgeWebhookDeliveries(sql, { createdBefore: ago(config.WEBHOOK_DELIVERY_RETENTION_DAYS * DAY_SECONDS), limit }),
    ),
    pairingsPurged: await pages(() => purgeDevicePairings(sql, { expiredBefore: ago(PAIRING_RETENTION_SECONDS), limit })),
    scopedTokensPurged: await pages(() => purgeScopedTokens(sql, { expiredBefore: now, limit })),
    messagesPurged:
      config.MESSAGE_RETENTION_DAYS === 0
        ? 0
        : await pages(() => purgeMessages(sql, { finishedBefore: ago(config.MESSAGE_RETENTION_DAYS * DAY_SECONDS), limit })),
    messageEventsPurged:
      config.MESSAGE_EVENT_RETENTION_DAYS === 0
        ? 0
        : await pages(() => purgeMessageEvents(sql, { before: ago(config.MESSAGE_EVENT_RETENTION_DAYS * DAY_SECONDS), limit })),
    receivedPurged:
      config.RECEIVED_SMS_RETENTION_DAYS === 0
        ? 0
        : await pages(() => purgeReceivedMessages(sql, { createdBefore: ago(config.RECEIVED_SMS_RETENTION_DAYS * DAY_SECONDS), limit })),
  };
}

/** Runs `step` until it handles less than a PAGE, or MAX_PAGES times; the rows it handled in all. */
export async function pages(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const handled = await step();
    total += handled;
    if (handled < PAGE) break;
  }
  return total;
}
