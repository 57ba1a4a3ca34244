/**
 * Work an API process goes on with after it answered (a send's assignment and wake-ups): kept
 * here so that closing the process waits for it before the connections close. Work never rejects
 * here: each piece reports its own failure (the messages stay pending for the outbox sweep).
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly max: number) {}

  /** Takes `work` unless `max` pieces are running (the caller then waits for it itself); says whether it did. */
  add(work: Promise<unknown>): boolean {
    if (this.running.size >= this.max) return false;
    const tracked = work.catch(() => undefined).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
    return true;
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves once all the work added so far has ended. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
