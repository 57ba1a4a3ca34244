/**
 * What a simulator process of SMS Gate phones logged (pino JSON lines, `phone` bound to each
 * phone's log), read as it grows: the events each phone received (its `event received` lines, at
 * debug level) and the calls that failed.
 */
interface Line {
  time: number;
  level: number;
  phone?: number;
  msg?: string;
  event?: string;
  err?: { status?: number };
}

export class SimLog {
  private read = 0;
  private readonly events = new Map<string, number[]>();
  private readonly failures: { time: number; status: number | undefined; refused: boolean }[] = [];

  constructor(private readonly lines: () => string[]) {}

  /** When phone `phone` first received `event` at or after `since` (ms), if it did. */
  firstEvent(phone: number, event: string, since: number): number | undefined {
    this.catchUp();
    return this.events.get(`${phone}/${event}`)?.find((time) => time >= since);
  }

  /** The phones' calls that failed since `since` (ms): with a 5xx, refused (401, 429), or finding no server. */
  failuresSince(since: number): { serverErrors: number; refusals: number; unreachable: number } {
    this.catchUp();
    const failed = this.failures.filter((f) => f.time >= since);
    return {
      serverErrors: failed.filter((f) => f.status !== undefined && f.status >= 500).length,
      refusals: failed.filter((f) => f.refused).length,
      unreachable: failed.filter((f) => f.status === undefined && !f.refused).length,
    };
  }

  private catchUp(): void {
    const lines = this.lines();
    for (; this.read < lines.length; this.read++) {
      const text = lines[this.read]!;
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Line;
      if (line.event !== undefined && line.phone !== undefined) {
        const key = `${line.phone}/${line.event}`;
        const times = this.events.get(key) ?? [];
        times.push(line.time);
        this.events.set(key, times);
      } else if (line.level >= 40) {
        const status = line.err?.status;
        // A 401 on PATCH /device is logged as the phone registering again, without the error.
        const refused = status === 401 || status === 429 || line.msg === 'device token refused: registering again';
        this.failures.push({ time: line.time, status, refused });
      }
    }
  }
}
