/**
 * The ids a simulated phone has handled, so that a message offered again is never sent twice.
 * Bounded by age: an id is forgotten `keepMs` after it was first seen, long after smsgw stops
 * offering it (its sending lease), so a long run does not grow without end.
 */
export class SeenIds<T = true> {
  // Insertion order is age order, so the oldest are always at the front.
  private readonly entries = new Map<string, { at: number; value: T }>();

  constructor(
    private readonly keepMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  has(id: string): boolean {
    this.forgetOld();
    return this.entries.has(id);
  }

  get(id: string): T | undefined {
    this.forgetOld();
    return this.entries.get(id)?.value;
  }

  /** Records `id` unless it is known; returns whether it was new. */
  add(id: string, value: T): boolean {
    this.forgetOld();
    if (this.entries.has(id)) return false;
    this.entries.set(id, { at: this.now(), value });
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  private forgetOld(): void {
    const cutoff = this.now() - this.keepMs;
    for (const [id, entry] of this.entries) {
      if (entry.at > cutoff) break;
      this.entries.delete(id);
    }
  }
}
