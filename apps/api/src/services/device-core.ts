import type { FastifyInstance } from 'fastify';
import { AppError, isUuid, newId, storableText, toReceivedRecord, withoutLeapSecond } from '@smsgw/core';
import {
  announceTransitions,
  readyForMoreOffers,
  messagesOfDevice,
  offerMessages,
  storeInbound,
  type AuthenticatedDevice,
  type InboundSms,
  type OfferOrder,
  type OfferedMessage,
} from '@smsgw/db';
import { publishWakeups, type DeviceReport } from '@smsgw/queue';
import { announceDeps } from './send-deps.ts';

/**
 * The device core as every device protocol uses it (routes/device-protocols/: native, and sms-gate
 * for the SMS Gate app). The adapters translate wire shapes; offering, reports and incoming SMS are done here
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
 * are rejected one by one. The request is answered once its reports are queued. `offered` (the
 * messages this process offered to each device) spares the statement that asks Postgres which
 * are the device's: only ids it does not know are looked up.
 */
export async function acceptReports(
  app: FastifyInstance,
  device: AuthenticatedDevice,
  reports: DeviceReport[],
  offered?: OfferedMessages,
): Promise<ReportsOutcome> {
  const ids = [...new Set(reports.filter((r) => isUuid(r.id)).map((r) => r.id.toLowerCase()))];
  const known = ids.filter((id) => offered?.ownerOf(id) === device.id);
  const unknown = known.length === ids.length ? [] : ids.filter((id) => offered?.ownerOf(id) !== device.id);
  const own = new Set([...known, ...(await messagesOfDevice(app.sql, { deviceId: device.id, ids: unknown }))]);
  const mine = reports.filter((r) => own.has(r.id.toLowerCase()));
  const accepted = await queueReports(app, device, mine);
  const rejected = reports
    .filter((r) => !own.has(r.id.toLowerCase()))
    .map((r) => ({ id: r.id, error: 'not_found', message: 'No message of this device has this id.' }));
  return { accepted, rejected };
}

// The most offers remembered per API process; past it the oldest go first (their reports ask Postgres).
// An entry outlives the message's final report: the app's snapshots of one message overtake each
// other, so one may come after the final one (and is then queued without a statement too).
const OFFERS_REMEMBERED = 100_000;

/**
 * The messages this API process offered, by device: a message offered to a device stays that
 * device's (docs/devices.md, "Delivery"), so its reports need no statement to say whose it is.
 * One that fails over to another device leaves a stale entry at worst, and its old device's
 * report is then queued and matches nothing in the dispatcher's compare-and-set.
 */
export class OfferedMessages {
  private readonly owners = new Map<string, string>();

  remember(deviceId: string, ids: readonly string[]): void {
    for (const id of ids) {
      this.owners.delete(id);
      if (this.owners.size >= OFFERS_REMEMBERED) this.owners.delete(this.owners.keys().next().value!);
      this.owners.set(id, deviceId);
    }
  }

  ownerOf(id: string): string | undefined {
    return this.owners.get(id);
  }
}

/** Queues a device's reports (ids that are not UUIDs dropped); returns how many. 503 when Redis does not take them. */
async function queueReports(app: FastifyInstance, device: AuthenticatedDevice, reports: DeviceReport[]): Promise<number> {
  const queued = reports
    .filter((r) => isUuid(r.id))
    .map((r) => ({
      ...r,
      id: r.id.toLowerCase(),
      ...(r.error !== undefined && { error: storableText(r.error) }),
      // The dispatcher reads `at` with Date: a leap second would fail the whole job on every retry.
      ...(r.at !== undefined && { at: withoutLeapSecond(r.at) }),
    }));
  if (queued.length === 0) return 0;
  try {
    await app.queueReports({ deviceId: device.id, receivedAt: new Date().toISOString(), reports: queued });
  } catch (error) {
    app.incidents.report('device reports could not be queued: answered 503', error);
    throw new AppError('service_unavailable', 'Reports cannot be taken right now; send them again.');
  }
  return queued.length;
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
    ...m,
    id: newId(),
    from: storableText(m.from),
    to: m.to === null ? null : storableText(m.to),
    body: storableText(m.body),
    dedupKey: m.dedupKey === null ? null : storableText(m.dedupKey),
  }));
  const stored = await storeInbound(app.sql, { userId: device.userId, deviceId: device.id, now, messages: inbound });
  const storedIds = new Set(stored.moved);
  const events = inbound
    .filter((m) => storedIds.has(m.id))
    .map((m) => ({ userId: device.userId, event: { type: 'sms.received' as const, data: toReceivedRecord({ ...m, deviceId: device.id, createdAt: now }) } }));
  await announceTransitions(announceDeps(app), { deliveries: stored.deliveries, events });
  return { stored: stored.moved.length, duplicates: messages.length - stored.moved.length };
}
