import { readdir, readFile } from 'node:fs/promises';

/** CPU seconds used so far by a process, with its reaped children (Postgres' backends). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
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
