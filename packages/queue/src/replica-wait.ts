import type { RedisClient } from './topology.ts';

/** After a shortfall, WAIT is skipped for this long, then tried again. */
const SKIP_AFTER_SHORTFALL_MS = 10_000;

export interface ReplicaWaitOptions {
  /** The connection of the writes to wait for: WAIT counts what this connection wrote. */
  redis: RedisClient;
  /** The key prefix (one slot on a cluster): a keyed read of it takes the WAIT to the writes' node. */
  prefix: string;
  /** REDIS_WAIT_REPLICAS (replicasToWait); 0: never waits. */
  replicas: number;
  timeoutMs: number;
  /** Fewer replicas than asked acknowledged within the time (`acknowledged` of them). */
  onShortfall: (acknowledged: number) => void;
  now?: () => number;
}

/**
 * Redis replicates asynchronously: what the primary acknowledged may be lost when a replica takes
 * its place. For writes that a 2xx promises (a device's reports), `afterWrite` waits until
 * `replicas` replicas hold everything this connection wrote (Redis WAIT). On a cluster the WAIT
 * must reach the node of the writes: a pipeline goes to the node of its keyed commands, so it
 * carries a keyed read of smsgw's slot. When fewer acknowledge in time (a primary without replica,
 * as after a failover until the former primary is back as one), the writes stand, `onShortfall`
 * hears of it, and the next writes do not wait for SKIP_AFTER_SHORTFALL_MS. WAIT blocks its
 * connection, so the writes it follows have a connection of their own.
 */
export class ReplicaWait {
  private skipUntil = 0;

  constructor(private readonly options: ReplicaWaitOptions) {}

  async afterWrite(): Promise<void> {
    const { redis, prefix, replicas, timeoutMs, onShortfall } = this.options;
    const now = this.options.now?.() ?? Date.now();
    if (replicas === 0 || now < this.skipUntil) return;
    const replies = await redis.pipeline().exists(`${prefix}:replicas`).wait(replicas, timeoutMs).exec();
    const [error, acknowledged] = replies?.[1] ?? [new Error('WAIT had no reply'), null];
    if (error) throw error;
    if ((acknowledged as number) < replicas) {
      this.skipUntil = now + SKIP_AFTER_SHORTFALL_MS;
      onShortfall(acknowledged as number);
    }
  }
}

/** WAIT's time: half the command's (so that WAIT answers first), at most a second. */
export function replicaWaitTimeoutMs(commandTimeoutMs: number): number {
  return Math.max(1, Math.min(1000, Math.floor(commandTimeoutMs / 2)));
}
