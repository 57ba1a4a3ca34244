import type { FastifyInstance } from 'fastify';
import { markStreamsSeen } from '@smsgw/db';

/**
 * The keepalive refreshes of every event stream on this API process, written together: one
 * statement at most every `everyMs` for all the streams whose keepalive came due, rather than one
 * per stream (5,000 phones with a keepalive every 15 s were 333 statements a second). A refresh is
 * late by at most `everyMs` (an isolated one not at all), well inside the availability windows (keepalive plus grace).
 */
export class StreamSeenBatch {
  private pending = new Map<string, ((reportedAt: Date | null) => void)[]>();
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = 0;

  constructor(
    private readonly app: Pick<FastifyInstance, 'sql' | 'incidents'>,
    private readonly everyMs = 1000,
  ) {}

  /** Marks the device's stream seen with the next batch; `then` gets when the device last reported its health. */
  mark(deviceId: string, then: (reportedAt: Date | null) => void): void {
    const waiting = this.pending.get(deviceId);
    if (waiting) waiting.push(then);
    else this.pending.set(deviceId, [then]);
    // At once when the last statement is `everyMs` old, else when it will be: at most one statement per `everyMs`.
    this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + this.everyMs - Date.now()));
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = new Map();
    this.timer = undefined;
    this.lastFlush = Date.now();
    markStreamsSeen(this.app.sql, [...batch.keys()], new Date()).then(
      (reported) => {
        for (const [deviceId, waiting] of batch) for (const then of waiting) then(reported.get(deviceId) ?? null);
      },
      (error: unknown) => this.app.incidents.report('marking device streams seen failed', error),
    );
  }
}
