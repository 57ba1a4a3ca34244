import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import { availabilityWindows, failoverPool, pickDevice } from '@smsgw/core';
import {
  PRIORITY_SKIPS_PACING, assignMessages, availableDevices, failMessages, loadPendingMessages, pausedDevices, type Sql, type PendingMessage,
} from '@smsgw/db/sql';
import { DeviceBudgets, DevicePacing, publishWakeups, roundRobinKey, type WebhooksQueue } from '@smsgw/queue';
import { budgetAssignments, releaseBudgets } from './budget-assignments.ts';
import { enqueueDeliveries } from './enqueue-deliveries.ts';
import { holdBack } from './hold-back.ts';
import { paceAssignments, type Assignment } from './pace-assignments.ts';
import { publishStatus } from './publish-status.ts';
import { pickSticky, withStickySims } from './sticky-choice.ts';

/** `{ waitMs }`: every device that may take the message is at its rate limit; try again then. */
export type AssignOutcome = 'assigned' | 'not_pending' | 'no_device' | 'failed' | { waitMs: number };

export interface AssignDeps {
  sql: Sql;
  redis: Redis;
  webhooksQueue: WebhooksQueue;
  config: DispatcherConfig;
  log: Logger;
}

/**
 * Assigns a batch of messages: the named device, the recipient's sticky device (when the user has
 * sticky sender on and that device may take it), or the next available device of the user by a
 * round-robin cursor in Redis shared by every dispatcher (INCRBY hands each message its own slot),
 * then one compare-and-set statement for the batch and one wake-up per device.
 */
export async function assignDevices(deps: AssignDeps, messageIds: string[]): Promise<AssignOutcome[]> {
  const { sql, config } = deps;
  const now = new Date();
  const { ready: pending, held } = await holdBack(deps, await loadPendingMessages(sql, [...new Set(messageIds)]), now);
  const byId = new Map(pending.map((m) => [m.id, m]));

  const gone = pending.filter((m) => m.requestedDeviceGone).map((m) => m.id);
  const goneFailed = await failMessages(sql, { ids: gone, now, from: ['pending'], error: 'The device named for this message was deleted.' });
  await enqueueDeliveries(deps.webhooksQueue, deps.log, goneFailed.deliveries);
  const failed = new Set(goneFailed.moved);

  const roundRobin = pending.filter((m) => !m.requestedDeviceId);
  const devices = await availableDevices(sql, {
    userIds: [...new Set(roundRobin.map((m) => m.userId))],
    windows: availabilityWindows(config, now),
  });
  // Failover: paused devices are out of round-robin (and sticky choices), and a message never goes back to a device it failed on.
  const paused = await pausedDevices(sql, { userIds: [...devices.keys()], now });
  const pools = new Map([...devices].map(([userId, pool]) => [userId, failoverPool(pool, { attempted: new Set(), paused })]));
  const sticky = await pickSticky(sql, roundRobin, pools);
  const chosen = [...sticky.assignments, ...(await pickRoundRobin(deps, sticky.rest, devices, paused))];

  const proposed = pending
    .filter((m) => m.requestedDeviceId && !m.requestedDeviceGone)
    .map((m) => ({ id: m.id, deviceId: m.requestedDeviceId as string }))
    .concat(chosen);
  const pacing = new DevicePacing(deps.redis, config.QUEUE_PREFIX);
  const movable = new Map(roundRobin.map((m) => [m.id, m.userId]));
  // A priority of 100 or more skips pacing (SMS Gate's priority), never the carrier budgets.
  const urgent = (a: Assignment) => (byId.get(a.id)?.priority ?? 0) >= PRIORITY_SKIPS_PACING;
  const paced = await paceAssignments(sql, pacing, { assignments: proposed.filter((a) => !urgent(a)), movable, pools });
  // Carrier budgets (docs/devices.md, "Carrier budgets"): may move round-robin messages on, pick a SIM, or make them wait.
  const budgets = new DeviceBudgets(deps.redis, config.QUEUE_PREFIX);
  const budgeted = await budgetAssignments({ sql, budgets, pacing }, { assignments: [...paced.assignments, ...proposed.filter(urgent)], movable, pools });
  const waiting = new Map([...paced.waiting, ...budgeted.waiting]);
  const assignments = budgeted.assignments.filter((a) => !byId.get(a.id)?.attemptedDeviceIds.includes(a.deviceId));
  const assigned = await assignMessages(sql, { assignments: withStickySims(assignments, sticky.choices), now, maxQueueSeconds: config.MAX_QUEUE_SECONDS });
  await releaseUnassigned(pacing, budgeted.assignments, assigned, paced.limited);
  await releaseBudgets(budgets, budgeted.taken, assigned);
  await wake(deps, new Set(assigned.map((a) => a.deviceId)));
  await publishStatus(deps, [...goneFailed.moved, ...assigned.map((a) => a.id)]);

  deps.log.debug({ batch: messageIds.length, assigned: assigned.length }, 'assign batch');
  const assignedIds = new Set(assigned.map((a) => a.id));
  const chosenIds = new Set(assignments.map((a) => a.id));
  return messageIds.map((id): AssignOutcome => {
    if (assignedIds.has(id)) return 'assigned';
    const heldBack = held.get(id);
    if (heldBack !== undefined) return heldBack;
    const waitMs = waiting.get(id);
    if (waitMs !== undefined) return { waitMs };
    if (failed.has(id)) return 'failed';
    if (byId.has(id) && !chosenIds.has(id)) return 'no_device';
    return 'not_pending';
  });
}

async function pickRoundRobin(
  deps: AssignDeps,
  messages: PendingMessage[],
  devices: Map<string, string[]>,
  paused: ReadonlySet<string>,
): Promise<{ id: string; deviceId: string }[]> {
  const byUser = new Map<string, PendingMessage[]>();
  for (const m of messages) if (devices.has(m.userId)) byUser.set(m.userId, [...(byUser.get(m.userId) ?? []), m]);
  if (byUser.size === 0) return [];

  const users = [...byUser.keys()];
  const pipeline = deps.redis.pipeline();
  for (const userId of users) pipeline.incrby(roundRobinKey(deps.config.QUEUE_PREFIX, userId), byUser.get(userId)!.length);
  const results = (await pipeline.exec()) ?? [];

  const picks: { id: string; deviceId: string }[] = [];
  users.forEach((userId, u) => {
    const [error, end] = results[u] ?? [new Error('no reply'), 0];
    if (error) throw error;
    const list = byUser.get(userId)!;
    const pool = devices.get(userId)!;
    const start = Number(end) - list.length;
    list.forEach((message, i) => {
      // A message whose lease expired goes to another device when there is one.
      const device = pickDevice(failoverPool(pool, { attempted: new Set(message.attemptedDeviceIds), paused }), start + i, message.previousDeviceId);
      if (device !== undefined) picks.push({ id: message.id, deviceId: device });
    });
  });
  return picks;
}

/** Gives back the pacing places of messages that another dispatcher assigned first (or that left pending). */
async function releaseUnassigned(pacing: DevicePacing, tried: Assignment[], assigned: Assignment[], limited: Set<string>): Promise<void> {
  const done = new Set(assigned.map((a) => a.id));
  const byDevice = new Map<string, string[]>();
  for (const a of tried) if (limited.has(a.deviceId) && !done.has(a.id)) byDevice.set(a.deviceId, [...(byDevice.get(a.deviceId) ?? []), a.id]);
  for (const [deviceId, ids] of byDevice) await pacing.release(deviceId, ids);
}

/** One wake-up per device per batch, whichever API process holds the device's stream. */
async function wake(deps: AssignDeps, deviceIds: Set<string>): Promise<void> {
  try {
    await publishWakeups(deps.redis, deps.config.QUEUE_PREFIX, deviceIds);
  } catch (error) {
    // The devices' safety-net polling picks the messages up; the assignment stands.
    deps.log.warn({ err: error }, 'wake-up publish failed');
  }
}
