/** The part of a pino logger that BurstLog writes to. */
export interface WarnLogger {
  warn(object: object, message: string): void;
}

interface Burst {
  first: number;
  suppressed: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Logs an expected, repeating condition (Redis away, a job's lock lost after a stall) once per burst
 * instead of once per occurrence: the first occurrence of a kind at once, at warn, with the error's
 * message but not its stack; the ones after it within `windowMs` only as a count, in one line at the
 * end of the window.
 */
export class BurstLog {
  private readonly bursts = new Map<string, Burst>();

  constructor(
    private readonly log: WarnLogger,
    private readonly windowMs = 10_000,
  ) {}

  report(kind: string, error: unknown, context: object = {}): void {
    const burst = this.bursts.get(kind);
    if (burst) {
      burst.suppressed++;
      return;
    }
    const started: Burst = { first: Date.now(), suppressed: 0, timer: undefined };
    this.bursts.set(kind, started);
    this.log.warn({ ...context, error: describe(error) }, kind);
    started.timer = setTimeout(() => this.flush(kind), this.windowMs);
    started.timer.unref?.();
  }

  /** Writes the counts of the bursts in progress (on shutdown). */
  close(): void {
    for (const kind of [...this.bursts.keys()]) this.flush(kind);
  }

  private flush(kind: string): void {
    const burst = this.bursts.get(kind);
    if (!burst) return;
    clearTimeout(burst.timer);
    this.bursts.delete(kind);
    if (burst.suppressed > 0) {
      this.log.warn({ repeated: burst.suppressed, seconds: Math.round((Date.now() - burst.first) / 1000) }, `${kind} (repeated)`);
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
