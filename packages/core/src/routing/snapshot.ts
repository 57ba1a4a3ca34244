import type { Budgets, SimBudgets } from '../carrier-budgets.ts';
import type { RateLimits } from '../pacing.ts';

/**
 * What the routing planner decides from (docs/development.md, "The routing planner"): the pending
 * messages of a batch and everything about their candidate devices, read once by packages/db
 * (`loadRoutingSnapshot`) and the shared counters in Redis (packages/queue, `readRoutingCounters`).
 */
export interface RoutingMessage {
  id: string;
  userId: string;
  /** The device the caller named (null: round-robin). */
  requestedDeviceId: string | null;
  /** The named device was deleted. */
  requestedDeviceGone: boolean;
  /** The SIM the caller named (null: any; a SIM smsgw picked earlier counts as none). */
  requestedSim: number | null;
  /** The device of the previous assignment, if a lease expired; avoided when another is available. */
  previousDeviceId: string | null;
  /** Devices that failed it before it left them (failover): never given it again. */
  attemptedDeviceIds: string[];
  /** Scheduled: no device may have it before then. */
  sendAt: Date | null;
  /** Not handed to a device by then, it fails. */
  validUntil: Date | null;
  /** With sendAt, where MAX_QUEUE_SECONDS counts from when validUntil is null. */
  createdAt: Date;
  /** SMS Gate's priority: from PRIORITY_SKIPS_PACING it skips the devices' pacing. */
  priority: number;
  /** SMS Gate ciphertexts: only the user's SMS Gate phones may take it. */
  encrypted: boolean;
  /** Its parts and its recipient: what a carrier budget counts. */
  segments: number;
  to: string;
}

/** A recipient's sticky device (and SIM), as the last assignment or inbound message left it. */
export interface StickyDevice {
  deviceId: string;
  simNumber: number | null;
}

/** A device's carrier budgets (docs/devices.md, "Carrier budgets"). */
export interface DeviceBudgetLimits {
  device: Budgets;
  /** Only the SIMs with a budget, by number. */
  sims: SimBudgets[];
  /** The SIMs the device has (deviceSimNumbers). */
  simNumbers: number[];
  /** Changes with any budget: counters made under other limits are rebuilt. */
  generation: string;
}

/** A paced device's room now in its windows, and when a place frees once that room is taken. */
export interface PaceRoom {
  room: number;
  retryInMs: number;
}

/** A budget scope's counts (Redis's, as packages/queue's budget scripts keep them). */
export interface ScopeCounts {
  /** Parts handed per minute in the rolling hour: [minute since the epoch, parts], oldest first. */
  minutes: [number, number][];
  day: number;
  month: number;
  /** Distinct recipients this month. */
  recipients: number;
  /** Those of the batch's recipients already counted this month (they cost no new recipient). */
  known: Set<string>;
}

/** The shared counters of the devices the batch may use, read without taking anything. */
export interface RoutingCounters {
  /** Redis's clock when the counters were read (ms): the budget windows follow it. */
  clock: number;
  /** Each user's round-robin cursor (0: none yet). */
  cursors: Map<string, number>;
  /** Slot ranges already reserved, by pool: their first slot (the plan was redone after the cursor moved). */
  slots: Map<string, number>;
  /** By device, those with rate limits. */
  pacing: Map<string, PaceRoom>;
  /** By budget scope (`scopeKey`). */
  budgets: Map<string, ScopeCounts>;
}

export interface RoutingSnapshot {
  now: Date;
  /** MAX_QUEUE_SECONDS: a message's queue deadline when it has no valid_until. */
  maxQueueSeconds: number;
  /** The batch's pending messages, in batch order. */
  messages: RoutingMessage[];
  /** Each pool's available devices in round-robin order, by pool key (`poolOf`). */
  pools: Map<string, string[]>;
  /** Devices out of round-robin for a while (quarantined, or at Android's sending limit). */
  paused: Set<string>;
  /** By message id: its recipient's sticky device, for users who have sticky sender on. */
  sticky: Map<string, StickyDevice>;
  /** By device, those that have any. */
  rateLimits: Map<string, RateLimits>;
  /** By device, those that have any. */
  budgets: Map<string, DeviceBudgetLimits>;
  counters: RoutingCounters;
}

/** A budget scope: a device as a whole (SIM 0) or one of its SIMs. */
export function scopeKey(scope: { deviceId: string; sim: number }): string {
  return `${scope.deviceId}:${scope.sim}`;
}
