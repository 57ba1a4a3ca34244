/**
 * Gathers single items into batches: `add` resolves with the item's own result once its batch was
 * handled. A batch is handled when it is full, or as soon as the previous batch is done, so that
 * under load the batches grow by themselves and when idle an item waits for nothing (or for the
 * linger, when one is set).
 */
export class Batcher<In, Out> {
  private queue: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  private running = false;

  /**
   * `lingerMs`: how long the first item of a batch waits for others when nothing is in hand (0:
   * until the end of the event-loop turn). Worth it where a batch's cost hardly grows with its size
   * and nobody waits on the result (the dispatcher's reports: one statement per lifecycle step).
   */
  constructor(
    private readonly handle: (items: In[]) => Promise<Out[]>,
    private readonly maxSize: number,
    private readonly lingerMs = 0,
  ) {}

  /** Nothing waiting and nothing in hand. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        // Let the other jobs taken in this tick (or in the linger) join the batch.
        if (this.lingerMs > 0) setTimeout(() => void this.drain(), this.lingerMs);
        else setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxSize);
      try {
        const results = await this.handle(batch.map((entry) => entry.item));
        if (results.length !== batch.length) throw new Error(`batch handler returned ${results.length} results for ${batch.length} items`);
        for (const [i, entry] of batch.entries()) entry.resolve(results[i] as Out);
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.running = false;
  }
}
