import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { JOBS } from '@smsgw/queue';

const SCHEDULER_ID = 'sweep';

/**
 * The sweep's BullMQ job scheduler, which lives only in Redis. Every dispatcher checks it on a timer
 * and re-creates it when it is gone (Redis restarted empty, or flushed): without it nothing would
 * run the leases, the outbox, expiry or retention, and pending messages would wait for a restart.
 */
export class SweepSchedule {
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly queue: Queue,
    private readonly everyMs: number,
    private readonly log: Logger,
  ) {}

  /** Creates (or updates) the scheduler now, then checks it every `checkEveryMs`. */
  async start(checkEveryMs: number): Promise<void> {
    await this.upsert();
    this.timer = setInterval(() => void this.check(), checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Re-creates the scheduler if Redis lost it; true when it did. Redis being away is not an error here. */
  async check(): Promise<boolean> {
    if (this.checking) return false;
    this.checking = true;
    try {
      if (await this.queue.getJobScheduler(SCHEDULER_ID)) return false;
      await this.upsert();
      this.log.error('the sweep schedule was missing from Redis (restarted empty or flushed?): re-created it');
      return true;
    } catch {
      return false; // Redis unreachable: the next check tries again
    } finally {
      this.checking = false;
    }
  }

  private async upsert(): Promise<void> {
    await this.queue.upsertJobScheduler(
      SCHEDULER_ID,
      { every: this.everyMs },
      { name: 'maintenance.sweep', data: {}, opts: JOBS['maintenance.sweep'].options },
    );
  }
}
