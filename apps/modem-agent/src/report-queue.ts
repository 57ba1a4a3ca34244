import type { Logger } from 'pino';
import type { Report, ReportsResult } from '@smsgw/client';

// smsgw takes at most 500 reports a request.
const BATCH = 500;

export interface ReportQueueOptions {
  send: (reports: Report[]) => Promise<ReportsResult>;
  /** Called with every batch smsgw answered, rejected reports included (a rejection is final). */
  onAccepted: (reports: Report[]) => void;
  log: Logger;
  /** How long a report waits for others to go with it. */
  coalesceMs?: number;
  /** The first pause after smsgw did not answer; it doubles up to `retryMaxMs`. */
  retryMinMs?: number;
  retryMaxMs: number;
}

/**
 * The reports on their way to smsgw. A report leaves on its own, at most `coalesceMs` after it was
 * queued, with whatever else was queued meanwhile: a status report that comes while the agent is
 * idle must not wait for its next claim. While smsgw does not answer, the queue tries again after a
 * pause doubling up to `retryMaxMs`; a report queued meanwhile waits for that attempt. What must
 * survive a restart is in the state file until `onAccepted` removes it, so the queue itself lives in
 * memory.
 */
export class ReportQueue {
  private pending: Report[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private failures = 0;
  private closed = false;
  private readonly coalesceMs: number;
  private readonly retryMinMs: number;

  constructor(private readonly options: ReportQueueOptions) {
    this.coalesceMs = options.coalesceMs ?? 200;
    this.retryMinMs = options.retryMinMs ?? 250;
  }

  get size(): number {
    return this.pending.length;
  }

  /** Queues a report, once per message and status. */
  add(report: Report): void {
    if (this.pending.some((r) => r.id === report.id && r.status === report.status)) return;
    this.pending.push(report);
    // A send under way takes it next; a retry pause already set is kept, not shortened.
    if (!this.sending) this.schedule(this.coalesceMs);
  }

  /** Sends what is queued now, after any send under way; a failure leaves it queued for the next attempt. */
  async flush(): Promise<void> {
    this.cancelTimer();
    while (this.sending) await this.sending;
    if (this.pending.length === 0) return;
    this.sending = this.sendPending().finally(() => (this.sending = undefined));
    await this.sending;
  }

  /** No more sends of its own: after this only `flush` sends. */
  close(): void {
    this.closed = true;
    this.cancelTimer();
  }

  private async sendPending(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.slice(0, BATCH);
      try {
        const result = await this.options.send(batch);
        if (result.rejected.length > 0) this.options.log.warn({ rejected: result.rejected }, 'reports rejected');
      } catch (error) {
        this.failures++;
        const retryInMs = Math.min(this.retryMinMs * 2 ** (this.failures - 1), this.options.retryMaxMs);
        this.options.log.warn({ count: this.pending.length, retryInMs, reason: (error as Error).message }, 'reports not accepted; trying again later');
        this.schedule(retryInMs);
        return;
      }
      this.failures = 0;
      this.pending = this.pending.filter((report) => !batch.includes(report));
      this.options.onAccepted(batch);
    }
  }

  private schedule(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((error: unknown) => this.options.log.error({ reason: (error as Error).message }, 'sending reports stopped'));
    }, ms);
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
