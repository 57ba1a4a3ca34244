import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import { availabilityWindows } from '@smsgw/core';
import {
  EXPIRED_BEFORE_SENT,
  announceTransitions,
  devicesWithWaitingOffers,
  releaseFromUnavailable,
  expiredUnsent,
  failMessages,
  lapsedOffers,
  overdueDeliveries,
  pastQueueDeadline,
  pastValidUntil,
  releaseUnclaimed,
  stalePending,
  unclaimedExhausted,
  type OverdueCursor,
  type PendingCursor,
  type Sql,
  type Transitioned,
} from '@smsgw/db/sql';
import { enqueueDispatch, enqueueWebhookDeliveries, wakeDevicesAgain, type DispatchQueue, type WebhooksQueue, type RedisClient } from '@smsgw/queue';
import type { EndpointSlots } from '../webhooks/endpoint-slots.ts';
import { announceDeps } from './announce-deps.ts';
import { MAX_PAGES, PAGE, applyRetention, pages, type RetentionResult } from './retention.ts';
import { announceDeviceHealth } from './device-health.ts';
import type { Handler } from './job-handler.ts';

// A device whose offers wait this long is woken again, at most once a minute (real-devices.md §2b.5).
const WAKE_AGAIN_AFTER_SECONDS = 30;
const WAKE_AGAIN_EVERY_MS = 60_000;

export interface SweepDeps {
  sql: Sql;
  redis: RedisClient;
  dispatchQueue: DispatchQueue;
  webhooksQueue: WebhooksQueue;
  /** The webhook endpoints' slots: parked deliveries whose holders died are woken. */
  slots: EndpointSlots;
  config: DispatcherConfig;
  log: Logger;
}

export interface SweepResult extends RetentionResult {
  reassigned: number;
  unclaimedFailed: number;
  unacknowledgedFailed: number;
  sendingFailed: number;
  devicesWokenAgain: number;
  expired: number;
  outboxEnqueued: number;
  webhooksEnqueued: number;
  webhookEndpointsWoken: number;
  /** Devices whose announced health status moved (device.* webhook events). */
  deviceHealthMoved: number;
}

/**
 * Leases, expiry and the outbox (decisions.md, "Leases"): runs on one dispatcher at a time, on a
 * schedule. Every change is a compare-and-set, so a sweep that overlaps a report changes nothing twice.
 */
export async function sweep(deps: SweepDeps, now = new Date()): Promise<SweepResult> {
  const { sql, config } = deps;
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const result: SweepResult = {
    reassigned: 0,
    unclaimedFailed: 0,
    unacknowledgedFailed: 0,
    sendingFailed: 0,
    devicesWokenAgain: 0,
    expired: 0,
    outboxEnqueued: 0,
    webhooksEnqueued: 0,
    webhookEndpointsWoken: 0,
    deviceHealthMoved: 0,
    idempotencyKeysPurged: 0,
    webhookDeliveriesPurged: 0,
    pairingsPurged: 0,
    scopedTokensPurged: 0,
    messagesPurged: 0,
    messageEventsPurged: 0,
    receivedPurged: 0,
  };
  const announcing = announceDeps(deps);
  const failed = async (transitioned: Transitioned) => {
    await announceTransitions(announcing, transitioned);
    return transitioned.moved.length;
  };

  // Expiry first, so that an expired message is not handed back to round-robin just before it fails.
  // MAX_QUEUE_SECONDS (no stale sends) before MESSAGE_TTL_SECONDS: past both, the message gets the first's error.
  await pages(async () => {
    const ids = await pastQueueDeadline(sql, { dueBefore: ago(config.MAX_QUEUE_SECONDS), limit: PAGE });
    result.expired += await failed(await failMessages(sql, { ids, now, from: ['pending', 'assigned'], error: EXPIRED_BEFORE_SENT }));
    return ids.length;
  });
  await pages(async () => {
    const ids = await expiredUnsent(sql, { createdBefore: ago(config.MESSAGE_TTL_SECONDS), limit: PAGE });
    result.expired += await failed(
      await failMessages(sql, {
        ids,
        now,
        from: ['pending', 'assigned'],
        error: `Expired: no device took the message within ${config.MESSAGE_TTL_SECONDS} seconds.`,
      }),
    );
    return ids.length;
  });
  await pages(async () => {
    const ids = await pastValidUntil(sql, { now, limit: PAGE });
    result.expired += await failed(await failMessages(sql, { ids, now, from: ['pending', 'assigned'], error: EXPIRED_BEFORE_SENT }));
    return ids.length;
  });

  // Failover: what a device that went offline was assigned and never offered goes back at once.
  await pages(async () => {
    const ids = await releaseFromUnavailable(sql, { windows: availabilityWindows(config, now), limit: PAGE, now });
    await enqueue(deps, ids);
    await announceTransitions(announcing, { moved: ids });
    result.reassigned += ids.length;
    return ids.length;
  });

  const assignedBefore = ago(config.ASSIGN_LEASE_SECONDS);
  await pages(async () => {
    const ids = await releaseUnclaimed(sql, { assignedBefore, maxAssignments: config.MAX_ASSIGNMENTS, limit: PAGE, now });
    await enqueue(deps, ids);
    await announceTransitions(announcing, { moved: ids });
    result.reassigned += ids.length;
    return ids.length;
  });
  await pages(async () => {
    const ids = await unclaimedExhausted(sql, { assignedBefore, maxAssignments: config.MAX_ASSIGNMENTS, limit: PAGE });
    result.unclaimedFailed += await failed(
      await failMessages(sql, {
        ids,
        now,
        from: ['assigned'],
        error: `No device claimed the message after ${config.MAX_ASSIGNMENTS} assignments of ${config.ASSIGN_LEASE_SECONDS} seconds.`,
      }),
    );
    return ids.length;
  });
  // An offered message is never moved: past its validUntil (and the phones' clock skew) it fails,
  // unless the device reported it sent first.
  const skew = config.DEVICE_CLOCK_SKEW_SECONDS;
  await pages(async () => {
    const { unacknowledged, unreported } = await lapsedOffers(sql, {
      offeredBefore: ago(config.SENDING_LEASE_SECONDS + skew),
      createdBefore: ago(config.MESSAGE_TTL_SECONDS + skew),
      validBefore: ago(skew),
      limit: PAGE,
    });
    result.unacknowledgedFailed += await failed(
      await failMessages(sql, {
        ids: unacknowledged,
        now,
        from: ['assigned'],
        error:
          'The device did not acknowledge the message before it was due (its validUntil); it is not given to another device because the phone may hold it.',
      }),
    );
    result.sendingFailed += await failed(
      await failMessages(sql, {
        ids: unreported,
        now,
        from: ['sending'],
        error: 'The device did not report a result before the message was due (its validUntil); it is not sent again because the phone may have sent it.',
      }),
    );
    return unacknowledged.length + unreported.length;
  });

  const waiting = await devicesWithWaitingOffers(sql, { before: ago(WAKE_AGAIN_AFTER_SECONDS), limit: PAGE });
  result.devicesWokenAgain = await wakeDevicesAgain(deps.redis, config.QUEUE_PREFIX, waiting, WAKE_AGAIN_EVERY_MS);

  // The outbox: re-adding a job that exists is a no-op, since the job id is the message id.
  let after: PendingCursor | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { ids, next } = await stalePending(sql, { updatedBefore: ago(config.OUTBOX_AGE_SECONDS), limit: PAGE, after });
    await enqueue(deps, ids);
    result.outboxEnqueued += ids.length;
    if (!next) break;
    after = next;
  }

  // The webhook outbox: a pending delivery whose attempt is overdue lost its job (or it is late
  // behind a backlog, and then the re-add is a no-op).
  let overdueAfter: OverdueCursor | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { deliveries, next } = await overdueDeliveries(sql, { before: ago(config.OUTBOX_AGE_SECONDS), limit: PAGE, after: overdueAfter });
    await enqueueWebhookDeliveries(deps.webhooksQueue, deliveries);
    result.webhooksEnqueued += deliveries.length;
    if (!next) break;
    overdueAfter = next;
  }

  const woken = await deps.slots.wakeOrphans();
  await enqueueWebhookDeliveries(deps.webhooksQueue, woken);
  result.webhookEndpointsWoken = woken.length;

  result.deviceHealthMoved = await announceDeviceHealth(deps, now);
  Object.assign(result, await applyRetention(sql, config, now));
  return result;
}

async function enqueue(deps: SweepDeps, ids: string[]): Promise<void> {
  if (ids.length > 0) await enqueueDispatch(deps.dispatchQueue, ids);
}

/** The `maintenance.sweep` job: a sweep that changed anything says what in one line. */
export function sweepHandler(deps: SweepDeps): Handler<'maintenance.sweep'> {
  return async () => {
    const result = await sweep(deps);
    if (Object.values(result).some((n) => n > 0)) deps.log.info({ sweep: result }, 'sweep');
    return result;
  };
}
