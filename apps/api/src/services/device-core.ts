import type { FastifyInstance } from 'fastify';
import { AppError, isUuid, newId, storableText, toReceivedRecord, withoutLeapSecond } from '@smsgw/core';
import {
  readyForMoreOffers, messagesOfDevice, offerMessages, storeInbound, type AuthenticatedDevice, type InboundSms, type OfferOrder, type OfferedMessage,
} from '@smsgw/db';
import { enqueueReports, enqueueWebhookDeliveries, publishUserEvents, publishWakeups, type DeviceReport } from '@smsgw/queue';

/**
 * The device core as both device protocols use it (routes/device: native; routes/mobile: the SMS
 * Gate app). The adapters translate wire shapes; offering, reports and incoming SMS are done here
 * once (docs/devices.md, "Delivery").
 */

/** The device's assigned messages, marked as offered (an offer is not a claim: see packages/db, offers.ts). */
export function offer(app: FastifyInstance, device: AuthenticatedDevice, options: { limit: number; order: OfferOrder }): Promise<OfferedMessage[]> {
  if (!device.enabled) return Promise.resolve([]);
  return offerMessages(app.sql, { deviceId: device.id, ...options, now: new Date(), maxQueueSeconds: app.config.MAX_QUEUE_SECONDS });
}

export interface ReportsOutcome {
  accepted: number;
  rejected: { id: string; error: string; message: string }[];
}

/**
 * Takes a device's reports: those about its own messages are queued for the dispatcher, which
 * applies each as a compare-and-set (a repeated or backward report changes nothing); the others
 * are rejected one by one. The request is answered once its reports are queued.
 */
export async function acceptReports(app: FastifyInstance, device: AuthenticatedDevice, reports: DeviceReport[]): Promise<ReportsOutcome> {
  const ids = reports.filter((r) => isUuid(r.id)).map((r) => r.id.toLowerCase());
  const own = await messagesOfDevice(app.sql, { deviceId: device.id, ids: [...new Set(ids)] });
  const accepted = reports
    .filter((r) => own.has(r.id.toLowerCase()))
    .map((r) => ({
      ...r,
      id: r.id.toLowerCase(),
      ...(r.error !== undefined && { error: storableText(r.error) }),
      // The dispatcher reads `at` with Date: a leap second would fail the whole job on every retry.
      ...(r.at !== undefined && { at: withoutLeapSecond(r.at) }),
    }));
  const rejected = reports
    .filter((r) => !own.has(r.id.toLowerCase()))
    .map((r) => ({ id: r.id, error: 'not_found', message: 'No message of this device has this id.' }));
  if (accepted.length > 0) {
    try {
      await enqueueReports(app.reportsQueue, { deviceId: device.id, receivedAt: new Date().toISOString(), reports: accepted });
    } catch (error) {
      app.incidents.report('device reports could not be queued: answered 503', error);
      throw new AppError('service_unavailable', 'Reports cannot be taken right now; send them again.');
    }
  }
  return { accepted: accepted.length, rejected };
}

/**
 * After acknowledgements: a device that pulls at most a page at a time is woken again once it
 * acknowledged all it was offered while messages it was never offered wait (real-devices.md
 * §2b.4). Not before: each pull makes the app report again every message it holds, so waking it
 * while it still holds unacknowledged offers would only repeat those reports. One check per
 * device a moment after the first acknowledgement of a burst, and one after any that come later,
 * so the check after the last acknowledgement is never dropped.
 */
export class MoreWaiting {
  private readonly due = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly delayMs = 200,
  ) {}

  acknowledged(deviceId: string): void {
    if (this.due.has(deviceId)) return;
    const timer = setTimeout(() => {
      this.due.delete(deviceId);
      readyForMoreOffers(this.app.sql, deviceId)
        .then((more) => (more ? publishWakeups(this.app.redis, this.app.config.QUEUE_PREFIX, [deviceId]) : undefined))
        .catch((error: unknown) => this.app.incidents.report('wake-up after acknowledgement failed', error));
    }, this.delayMs);
    timer.unref();
    this.due.set(deviceId, timer);
  }

  close(): void {
    for (const timer of this.due.values()) clearTimeout(timer);
    this.due.clear();
  }
}

/** An incoming SMS as a device adapter hands it over (the id is given here). */
export type IncomingSms = Omit<InboundSms, 'id'>;

/** Stores a device's incoming SMS once each, and queues their `message.received` webhooks. */
export async function receiveInbound(
  app: FastifyInstance,
  device: AuthenticatedDevice,
  messages: IncomingSms[],
): Promise<{ stored: number; duplicates: number }> {
  const now = new Date();
  const inbound = messages.map((m) => ({
    ...m, id: newId(), from: storableText(m.from), to: m.to === null ? null : storableText(m.to), body: storableText(m.body),
    dedupKey: m.dedupKey === null ? null : storableText(m.dedupKey),
  }));
  const stored = await storeInbound(app.sql, { userId: device.userId, deviceId: device.id, now, messages: inbound });
  const storedIds = new Set(stored.moved);
  const events = inbound
    .filter((m) => storedIds.has(m.id))
    .map((m) => ({ userId: device.userId, event: { type: 'sms.received' as const, data: toReceivedRecord({ ...m, deviceId: device.id, createdAt: now }) } }));
  // The user's live events (GET /api/v1/events); best effort, as every event.
  await publishUserEvents(app.redis, app.config.QUEUE_PREFIX, events).catch((error: unknown) => app.incidents.report('publishing received SMS events failed', error));
  try {
    await enqueueWebhookDeliveries(app.webhooksQueue, stored.deliveries);
  } catch (error) {
    // The delivery rows are the outbox: the dispatcher's sweep enqueues them.
    app.incidents.report('webhook enqueue failed: left to the outbox sweep', error);
  }
  return { stored: stored.moved.length, duplicates: messages.length - stored.moved.length };
}
