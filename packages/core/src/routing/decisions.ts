import type { Budgets } from '../carrier-budgets.ts';

/**
 * The routing plan: for each message of the batch, a device and SIM, a wait (until when, and why)
 * or a failure (and why); with the places in the shared counters the assignments need.
 */
export type Decision =
  | { action: 'assign'; deviceId: string; simNumber: number | null }
  /** The message's send_at is ahead, or every device that may take it is at its pacing or budget. */
  | { action: 'wait'; reason: 'not_due' | 'paced' | 'budget'; until: Date }
  /** No device may take it now: the job's own back-off decides when it is tried again. */
  | { action: 'wait'; reason: 'no_device' }
  | { action: 'fail'; reason: 'expired' | 'device_gone' };

/** A budget scope with what its counters are checked against. */
export interface BudgetScope {
  deviceId: string;
  /** 0: the device as a whole. */
  sim: number;
  generation: string;
  limits: Budgets;
}

/** What the assignments take in the shared counters, all or nothing per message. */
export interface Reservations {
  /** Round-robin slots per pool: the user's cursor moves by `count` from `start`. */
  slots: { pool: string; userId: string; start: number; count: number }[];
  /** Pacing places, per device, in order. */
  pacing: { deviceId: string; ids: string[] }[];
  /** Budget room, per set of scopes, in order. */
  budgets: { scopes: BudgetScope[]; ids: string[] }[];
}

export interface RoutingPlan {
  /** By message id: every message of the snapshot has one. */
  decisions: Map<string, Decision>;
  reservations: Reservations;
}
