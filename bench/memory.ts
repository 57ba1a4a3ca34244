import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SmsgwClient } from '@smsgw/client';
import { createApiKey, createDevice, createSql, createUser } from '@smsgw/db';
import { recreateDatabase } from '@smsgw/db/testing';
import { deletePrefix } from '@smsgw/queue';
import { Redis } from 'ioredis';
import { freePort } from '../test/support/cluster.ts';

/**
 * `./pnpmw bench:memory`: the resident memory of a fresh API process (dist/api.mjs, as `pnpm start`
 * runs it) when idle and at its peak over 50 sends of 1,000 recipients, 10 in flight. Target
 * (issue 27): peak <= 150 MB. The process runs on a database of its own (smsgw_bench_memory,
 * recreated) and a queue prefix of its own; no dispatcher runs, so the jobs wait in Redis.
 * MEMORY_API_BUNDLE runs another build of the API (a baseline worktree's dist/api.mjs) against
 * the same setup; MEMORY_NODE_FLAGS adds Node flags to it.
 */
const SENDS = 50;
const RECIPIENTS = 1000;
const IN_FLIGHT = 10;
const TARGET_MB = 150;

const root = fileURLToPath(new URL('..', import.meta.url));
if (!process.env.MEMORY_API_BUNDLE) execFileSync(process.execPath, ['scripts/build.mjs', 'api'], { cwd: root, stdio: 'inherit' });
const bundle = resolve(root, process.env.MEMORY_API_BUNDLE ?? 'dist/api.mjs');

const databaseUrl = await recreateDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', 'smsgw_bench_memory');
const sql = createSql({ url: databaseUrl, poolSize: 2 });
const user = await createUser(sql, { name: 'bench', monthlyQuota: 1_000_000_000 });
const { key } = await createApiKey(sql, { userId: user.id, name: 'bench' });
const { device } = await createDevice(sql, { userId: user.id, name: 'bench-phone' });
// Available, as if it had just made a request.
await sql.query('UPDATE devices SET last_seen_at = now() WHERE id = $1', [device.id]);

const port = await freePort();
const queuePrefix = `smsgw-bench-${randomBytes(4).toString('hex')}`;
const flags = process.env.MEMORY_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
const api = spawn(process.execPath, [...flags, '--enable-source-maps', bundle], {
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: queuePrefix,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_PER_MINUTE: '100000',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const exited = new Promise<void>((done) => api.once('exit', () => done()));
// A failed or interrupted run leaves no API behind.
process.once('exit', () => api.kill('SIGKILL'));
const baseUrl = `http://127.0.0.1:${port}`;

/** VmRSS and VmHWM (the peak so far) of the API, in MB. */
async function memory(): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${api.pid}/status`, 'utf8');
  const mb = (field: string) => Math.round(Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

/** CPU seconds the API used so far (user and system). */
async function cpuSeconds(): Promise<number> {
  const stat = await readFile(`/proc/${api.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

for (let i = 0; ; i++) {
  if (api.exitCode !== null) throw new Error('the API exited before it answered');
  if ((await fetch(`${baseUrl}/health`).catch(() => null))?.ok) break;
  if (i > 300) throw new Error('the API did not answer /health within 30 s');
  await new Promise((done) => setTimeout(done, 100));
}
// Idle: a few seconds after start, once start-up's garbage had its chance to be collected.
await new Promise((done) => setTimeout(done, 3000));
const idle = await memory();
const cpuIdle = await cpuSeconds();

const client = new SmsgwClient(baseUrl, key);
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    for (let r = next++; r < SENDS; r = next++) {
      const recipients = Array.from({ length: RECIPIENTS }, (_, i) => `+1555${String(r * RECIPIENTS + i).padStart(7, '0')}`);
      const result = await client.send({ recipients, body: `memory benchmark ${r}` });
      if (result.recipients_count !== RECIPIENTS) throw new Error(`send ${r} took ${result.recipients_count} recipients`);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const after = await memory();
const cpu = (await cpuSeconds()) - cpuIdle;

api.kill('SIGTERM');
await exited;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
await deletePrefix(redis, queuePrefix);
redis.disconnect();
await sql.end();

console.log(`smsgw API memory benchmark (node ${process.version}, ${bundle}${flags.length ? ` ${flags.join(' ')}` : ''})`);
console.log(`idle RSS ${idle.rss} MB (peak during start-up ${idle.peak} MB)`);
console.log(
  `${SENDS} sends of ${RECIPIENTS} recipients, ${IN_FLIGHT} in flight, in ${seconds.toFixed(1)} s, ${cpu.toFixed(1)} CPU seconds: RSS after ${after.rss} MB`,
);
console.log(`peak RSS ${after.peak} MB: ${after.peak <= TARGET_MB ? `<= ${TARGET_MB} ok` : `> ${TARGET_MB} MISSED`}`);
if (after.peak > TARGET_MB) process.exitCode = 1;
