import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** CPU seconds used so far by a process, with its reaped children (Postgres' backends). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return ((fields[11] ?? 0) + (fields[12] ?? 0) + (fields[13] ?? 0) + (fields[14] ?? 0)) / 100;
}

/** CPU seconds of every process named `name` (Postgres runs one per connection). */
export async function cpuOf(name: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim();
    if (comm === name) total += await cpuSeconds(Number(entry));
  }
  return total;
}

/** CPU seconds of Postgres, Redis and this process. */
export async function serviceCpu(): Promise<{ postgres: number; redis: number; node: number }> {
  const own = process.cpuUsage();
  return { postgres: await cpuOf('postgres'), redis: await cpuOf('redis-server'), node: (own.user + own.system) / 1e6 };
}

/** Waits until the processes have finished starting: their CPU time stops growing (at most a minute). */
export async function settled(pids: number[]): Promise<void> {
  const cpu = async () => {
    let total = 0;
    for (const pid of pids) total += await cpuSeconds(pid);
    return total;
  };
  let before = await cpu();
  for (let i = 0; i < 120; i++) {
    await sleep(500);
    const now = await cpu();
    // Less than 0.1 s of CPU in half a second across all of them: idle.
    if (now - before < 0.1) return;
    before = now;
  }
}

/**
 * CPU seconds of the Postgres backends serving one database (but the one asking), sampled every
 * `everyMs` from pg_stat_activity and /proc: on a server that other work shares, its other
 * databases are not counted. A backend that exits between two samples loses at most one interval.
 */
export class DatabaseCpu {
  private readonly last = new Map<number, number>();
  private total = 0;
  private seeded = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly query: (text: string, values: unknown[]) => Promise<{ rows: { pid: number }[] }>,
    private readonly database: string,
    everyMs = 1000,
  ) {
    this.timer = setInterval(() => void this.sample(), everyMs).unref();
    void this.sample();
  }

  /** Samples now and returns the CPU seconds counted since this tracker started. */
  async seconds(): Promise<number> {
    await this.sample();
    return this.total;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  // One sample at a time: two at once would count the same interval twice.
  private sample(): Promise<void> {
    this.chain = this.chain.then(async () => {
      const { rows } = await this.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [this.database]).catch(() => ({
        rows: [],
      }));
      for (const { pid } of rows) {
        const now = await cpuSeconds(pid);
        // Backends there at the first sample count from it; later ones from their start.
        const before = this.last.get(pid) ?? (this.seeded ? 0 : now);
        if (now >= before) this.total += now - before;
        this.last.set(pid, now);
      }
      this.seeded = true;
    });
    return this.chain;
  }
}
