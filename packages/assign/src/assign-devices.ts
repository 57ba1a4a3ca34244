import type { DispatcherConfig } from '@smsgw/config';
import { availabilityWindows, type Decision, type WarnLogger } from '@smsgw/core';
import {
  EXPIRED_BEFORE_SENT,
  announceTransitions,
  assignMessages,
  failMessages,
  loadRoutingSnapshot,
  type AnnounceDeps,
  type Sql,
  type Transitioned,
} from '@smsgw/db/sql';
import { DeviceBudgets, DevicePacing, publishWakeups, type RedisClient } from '@smsgw/queue';
import { planAndReserve, release } from './reserve-routing.ts';

/** `{ waitMs }`: every device that may take the message is at its rate limit, or it is not due yet; try again then. */
export type AssignOutcome = 'assigned' | 'not_pending' | 'no_device' | 'failed' | { waitMs: number };

/** What an assignment needs of its process (the dispatcher's dispatch job, or the API's send). */
export interface AssignDeps {
  sql: Sql;
  redis: RedisClient;
  /** Announcing the commit: the process's own (webhook deliveries, live status). */
  announce: AnnounceDeps;
  config: Pick<
    DispatcherConfig,
    'QUEUE_PREFIX' | 'MAX_QUEUE_SECONDS' | 'DEVICE_AVAILABLE_SECONDS' | 'DEVICE_HEARTBEAT_SECONDS' | 'DEVICE_STREAM_GRACE_SECONDS'
  >;
  log: WarnLogger & { debug(object: object, message: string): void };
}

const FAIL_ERRORS = {
  expired: EXPIRED_BEFORE_SENT,
  device_gone: 'The device named for this message was deleted.',
} as const;

/**
 * Assigns a batch of pending messages (the one home of the decision, for the dispatcher's
 * dispatch job and the API's send alike): loads the routing snapshot (packages/db), plans it (@smsgw/core's
 * `planRouting`: device and SIM, wait or fail for each), reserves the plan's places in the shared
 * counters, then commits: one fail statement per reason and one compare-and-set assignment for
 * the batch, and announces what moved (webhooks, one wake-up per device, live status).
 */
export async function assignDevices(deps: AssignDeps, messageIds: string[]): Promise<AssignOutcome[]> {
  const { sql, config } = deps;
  const now = new Date();
  const record = await loadRoutingSnapshot(sql, { ids: messageIds, now, windows: availabilityWindows(config, now), maxQueueSeconds: config.MAX_QUEUE_SECONDS });
  const counters = { ...deps, pacing: new DevicePacing(deps.redis, config.QUEUE_PREFIX), budgets: new DeviceBudgets(deps.redis, config.QUEUE_PREFIX) };
  const { plan, held } = await planAndReserve(counters, record);
  const decisions = [...plan.decisions];

  const failed: Transitioned[] = [];
  for (const reason of ['expired', 'device_gone'] as const) {
    const ids = decisions.filter(([, d]) => d.action === 'fail' && d.reason === reason).map(([id]) => id);
    failed.push(await failMessages(sql, { ids, now, from: ['pending'], error: FAIL_ERRORS[reason] }));
  }
  const assignments = decisions.flatMap(([id, d]) => (d.action === 'assign' ? [{ id, deviceId: d.deviceId, simNumber: d.simNumber }] : []));
  const assigned = await assignMessages(sql, { assignments, now, maxQueueSeconds: config.MAX_QUEUE_SECONDS });
  const assignedIds = new Set(assigned.map((a) => a.id));
  await release(counters, held, assignedIds);
  await announce(deps, failed, assigned);

  deps.log.debug({ batch: messageIds.length, assigned: assigned.length }, 'assign batch');
  const failedIds = new Set(failed.flatMap((f) => f.moved));
  return messageIds.map((id) => outcome(plan.decisions.get(id), { assigned: assignedIds.has(id), failed: failedIds.has(id), now }));
}

function outcome(decision: Decision | undefined, result: { assigned: boolean; failed: boolean; now: Date }): AssignOutcome {
  if (!decision) return 'not_pending';
  switch (decision.action) {
    case 'assign':
      return result.assigned ? 'assigned' : 'not_pending';
    case 'fail':
      // Not moved: another process moved it first; a named device's message is tried again.
      return result.failed ? 'failed' : decision.reason === 'device_gone' ? 'no_device' : 'not_pending';
    case 'wait':
      return decision.reason === 'no_device' ? 'no_device' : { waitMs: decision.until.getTime() - result.now.getTime() };
  }
}

/** After the commit: one wake-up per device that got messages, then the one after-commit step (webhook deliveries, live status). */
async function announce(deps: AssignDeps, failed: Transitioned[], assigned: { id: string; deviceId: string }[]): Promise<void> {
  try {
    await publishWakeups(deps.redis, deps.config.QUEUE_PREFIX, new Set(assigned.map((a) => a.deviceId)));
  } catch (error) {
    // The devices' safety-net polling picks the messages up; the assignment stands.
    deps.log.warn({ err: error }, 'wake-up publish failed');
  }
  await announceTransitions(deps.announce, {
    moved: [...failed.flatMap((f) => f.moved), ...assigned.map((a) => a.id)],
    deliveries: failed.flatMap((f) => f.deliveries),
  });
}
