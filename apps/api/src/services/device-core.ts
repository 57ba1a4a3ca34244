import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { AppError, isUuid, newId, storableText } from '@smsgw/core';
import {
  hasFreshOffers, messagesOfDevice, offerMessages, storeInbound, type AuthenticatedDevice, type OfferOrder, type OfferedMessage,
} from '@smsgw/db';
import { enqueueReports, enqueueWebhookDeliveries, publishWakeups, type DeviceReport } from '@smsgw/queue';

/**
 * The device core as both device protocols use it (routes/device: native; routes/mobile: the SMS
 * Gate app). The adapters translate wire shapes; offering, reports and incoming SMS are done here
 * once (docs/devices.md, "Delivery").
 */

/** The device's assigned messages, marked as offered (an offer is not a claim: see packages/db, offers.ts). */
export function offer(app: FastifyInstance, device: AuthenticatedDevice, options: { limit: number; order: OfferOrder }): Promise<OfferedMessage[]> {
  if (!device.enabled) return Promise.resolve([]);
  return offerMessages(app.sql, { deviceId: device.id, ...options, now: new Date() });
}

export interface ReportsOutcome {
  accepted: number;
  rejected: { id: string; error: string; message: string }[];
}

/**
 * Takes a device's reports: those about its own messages are queued for the dispatcher, which
 * applies each as a compare-and-set (a repeated or backward report changes nothing); the others
 * are rejected one by one.
 */
export async function acceptReports(
  app: FastifyInstance,
  log: FastifyBaseLogger,
  device: AuthenticatedDevice,
  reports: DeviceReport[],
): Promise<ReportsOutcome> {
  const wellFormed = reports.filter((r) => isUuid(r.id)).map((r) => r.id.toLowerCase());
  const own = await messagesOfDevice(app.sql, { deviceId: device.id, ids: [...new Set(wellFormed)] });
  const accepted = reports
    .filter((r) => own.has(r.id.toLowerCase()))
    .map((r) => ({ ...r, id: r.id.toLowerCase(), ...(r.error !== undefined && { error: storableText(r.error) }) }));
  const rejected = reports
    .filter((r) => !own.has(r.id.toLowerCase()))
    .map((r) => ({ id: r.id, error: 'not_found', message: 'No message of this device has this id.' }));
  if (accepted.length > 0) {
    try {
      await enqueueReports(app.reportsQueue, { deviceId: device.id, receivedAt: new Date().toISOString(), reports: accepted });
    } catch (error) {
      log.error({ err: error }, 'reports enqueue failed');
      throw new AppError('service_unavailable', 'Reports cannot be taken right now; send them again.');
    }
  }
  return { accepted: accepted.length, rejected };
}

/**
 * After an acknowledgement: a device that pulls at most a page at a time is woken again while it
 * has messages it was never offered (real-devices.md §2b.4). At most once a second per device and
 * API process.
 */
export function wakeIfMoreWaiting(app: FastifyInstance, log: FastifyBaseLogger, device: AuthenticatedDevice, lastCheck: Map<string, number>): void {
  const now = Date.now();
  if ((lastCheck.get(device.id) ?? 0) > now - 1000) return;
  lastCheck.set(device.id, now);
  if (lastCheck.size > 10_000) for (const [id, at] of lastCheck) if (at < now - 1000) lastCheck.delete(id);
  hasFreshOffers(app.sql, device.id)
    .then((more) => (more ? publishWakeups(app.redis, app.config.QUEUE_PREFIX, [device.id]) : undefined))
    .catch((error: unknown) => log.warn({ err: error }, 'wake-up after acknowledgement failed'));
}

export interface IncomingSms {
  from: string;
  to: string | null;
  body: string;
  simNumber: number | null;
  receivedAt: Date;
  dedupKey: string | null;
}

/** Stores a device's incoming SMS once each, and queues their `message.received` webhooks. */
export async function receiveInbound(
  app: FastifyInstance,
  log: FastifyBaseLogger,
  device: AuthenticatedDevice,
  messages: IncomingSms[],
): Promise<{ stored: number; duplicates: number }> {
  const stored = await storeInbound(app.sql, {
    userId: device.userId,
    deviceId: device.id,
    now: new Date(),
    messages: messages.map((m) => ({
      ...m, id: newId(), from: storableText(m.from), to: m.to === null ? null : storableText(m.to), body: storableText(m.body),
      dedupKey: m.dedupKey === null ? null : storableText(m.dedupKey),
    })),
  });
  try {
    await enqueueWebhookDeliveries(app.webhooksQueue, stored.deliveries);
  } catch (error) {
    // The delivery rows are the outbox: the dispatcher's sweep enqueues them.
    log.warn({ err: error }, 'webhook enqueue failed; left to the outbox sweep');
  }
  return { stored: stored.moved.length, duplicates: messages.length - stored.moved.length };
}
