import type { Logger } from 'pino';
import type { DispatcherConfig } from '@smsgw/config';
import { assignDevices, type AssignOutcome } from '@smsgw/assign';
import { Batcher } from '@smsgw/core';
import type { DispatcherMetrics } from '../metrics.ts';
import { announceDeps, type AnnounceResources } from './announce-deps.ts';
import { runAgainAt, type Handler } from './job-handler.ts';

// A message whose user has no available device is tried again after a quarter of the time it has
// waited so far, between these bounds: quickly after a short outage, rarely during a long one.
const NO_DEVICE_RETRY_MIN_MS = 5_000;
const NO_DEVICE_RETRY_MAX_MS = 300_000;

function noDeviceRetryDelay(waitedMs: number): number {
  return Math.min(NO_DEVICE_RETRY_MAX_MS, Math.max(NO_DEVICE_RETRY_MIN_MS, waitedMs / 4));
}

/**
 * The `message.dispatch` job: the messages of the jobs taken together are assigned together (up to
 * DISPATCH_BATCH_SIZE a statement). A message that must wait, for a device's rate limit or for any
 * device at all, runs again later without spending an attempt.
 */
export function dispatchHandler(deps: AnnounceResources & { config: DispatcherConfig; log: Logger; metrics: DispatcherMetrics }): Handler<'message.dispatch'> {
  const { metrics } = deps;
  const assignDeps = { ...deps, announce: announceDeps(deps) };
  const assigner = new Batcher<string, AssignOutcome>(async (ids) => {
    metrics.assignBatch.observe(ids.length);
    const outcomes = await assignDevices(assignDeps, ids);
    metrics.transitions.inc({ state: 'assigned' }, outcomes.filter((o) => o === 'assigned').length);
    return outcomes;
  }, deps.config.DISPATCH_BATCH_SIZE);

  return async ({ messageId }, job, token) => {
    const outcome = await assigner.add(messageId);
    if (typeof outcome === 'object') return runAgainAt(job, token, Date.now() + outcome.waitMs);
    if (outcome === 'no_device') return runAgainAt(job, token, Date.now() + noDeviceRetryDelay(Date.now() - job.timestamp));
    return outcome;
  };
}
