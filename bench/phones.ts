import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { SmsgwClient } from '@smsgw/client';
import { createApiKey, createUser } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { recreateDatabase } from '@smsgw/db/testing';
import { buildProcesses, startCluster } from '../test/support/cluster.ts';
import { cpuSeconds, DatabaseCpu, settled } from './cpu.ts';
import { createPairings, enrolPhones, walkDevices } from './phone-fleet.ts';
import { SimLog } from './sim-log.ts';

/**
 * `./pnpmw bench:phones` (issue 27, item 2): BENCH_PHONES (5,000) SMS Gate phones on one API
 * process and one dispatcher, on a database of its own (smsgw_bench_phones, recreated). The
 * benchmark enrols each phone with a pairing code (POST /device, as "Sign in by code"), restarts
 * the API, then starts one simulator process holding every phone, each starting as the app does
 * (PATCH /device, pull, settings, webhooks, its event stream; its ping every 60 s as smsgw's
 * settings ask). It measures the API's RSS per held stream, the idle CPU of the API and of the
 * database's Postgres backends over BENCH_IDLE_SECONDS (60) with every stream held, the wake-up
 * latency of BENCH_WAKEUPS (200) sends each to a named phone (the send's 202 to that phone's
 * `MessageEnqueued`), and a reconnect storm: the API killed (SIGKILL) and started again, every
 * phone reconnecting from 127.0.0.1. Prints the figures against the targets and exits 1 on a miss.
 */
const PHONES = Number(process.env.BENCH_PHONES ?? 5000);
const WAKEUPS = Math.min(PHONES, Number(process.env.BENCH_WAKEUPS ?? 200));
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const WAKEUP_PACE_MS = 100;
const START_SPREAD_MS = Number(process.env.BENCH_START_SPREAD_MS ?? PHONES * 20);
const TARGETS = { kbPerStream: 60, idleCpuPercent: 10, wakeupP99Ms: 1000, availableSeconds: 30 };
const DATABASE = 'smsgw_bench_phones';

// Each of the API and the simulator holds a socket per phone.
const openFiles = Number(/Max open files\s+(\d+)/.exec(await readFile('/proc/self/limits', 'utf8'))?.[1] ?? Infinity);
if (openFiles < PHONES + 1000)
  throw new Error(`ulimit -n is ${openFiles}: ${PHONES} phones need at least ${PHONES + 1000} (raise it, or set BENCH_PHONES lower)`);

const databaseUrl = await recreateDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', DATABASE);
const db = createDb({ url: databaseUrl, poolSize: 2 });
const user = await createUser(db, { name: 'bench', monthlyQuota: 1_000_000_000 });
const { key } = await createApiKey(db, { userId: user.id, name: 'bench' });
const pairings = await createPairings(db, user.id, PHONES);
const probe = new pg.Client({ connectionString: databaseUrl });
await probe.connect();

buildProcesses();
const logDir = await mkdtemp(join(tmpdir(), 'smsgw-bench-phones-'));
const cluster = await startCluster({
  databaseUrl,
  queuePrefix: `smsgw-bench-${randomBytes(4).toString('hex')}`,
  dispatchers: 1,
  logDir,
  // Enrolment runs at the benchmark's pace, not at the limit that slows guessing codes.
  env: { RATE_LIMIT_PER_MINUTE: '100000', REGISTRATIONS_PER_MINUTE_PER_ADDRESS: String(Math.max(120, 2 * PHONES)), LOG_LEVEL: 'warn' },
});
// Whatever fails, the processes stop.
try {
  const apiPid = () => cluster.processes.get('api')!.pid!;
  const rssKb = async () => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${apiPid()}/status`, 'utf8'))?.[1]);
  const stateDir = join(logDir, 'phones');
  const enrolStarted = Date.now();
  const deviceIds = await enrolPhones({ mobileUrl: `${cluster.baseUrl}/mobile/v1`, codes: pairings.map((p) => p.code), stateDir, inFlight: 4 });
  console.log(`enrolled ${PHONES} phones in ${((Date.now() - enrolStarted) / 1000).toFixed(1)} s`);

  // The API's idle size without what enrolment left in its heap.
  await cluster.kill('api', 'SIGTERM');
  await cluster.startApi();
  await settled([apiPid()]);
  const idleRssKb = await rssKb();

  /** How many phones opened an event stream since `since` (a stream marks its device seen when it opens). */
  const streamsSince = async (since: Date) =>
    (await probe.query<{ n: number }>('SELECT count(*)::int AS n FROM devices WHERE stream_seen_at >= $1 AND deleted_at IS NULL', [since])).rows[0]!.n;
  async function waitFor(what: string, done: () => Promise<boolean>, timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (!(await done())) {
      if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
      await sleep(250);
    }
    return Date.now();
  }

  const simStarted = new Date();
  // SIM_POLL_SECONDS: the app's own timer pulls every 15 minutes. The phones start over START_SPREAD_MS:
  // all at once they are 4 requests each in the same second, the storm below with their PATCH /device on top.
  await cluster.startSim('phones', { protocol: 'sms-gate', pairings: [] }, 0, {
    SIM_STATE_DIR: stateDir,
    LOG_LEVEL: 'debug',
    SIM_POLL_SECONDS: '900',
    SIM_START_SPREAD_MS: String(START_SPREAD_MS),
    // No log of sent messages: each phone would hold the file open, 5,000 descriptors.
    SIM_LOG_FILE: '',
  });
  const simLog = new SimLog(() => cluster.output('phones'));
  const heldAt = await waitFor(`${PHONES} streams`, async () => (await streamsSince(simStarted)) >= PHONES, 600_000);
  console.log(`${PHONES} streams held ${((heldAt - simStarted.getTime()) / 1000).toFixed(1)} s after the simulator started`);
  await sleep(15_000);

  // Idle: every stream held, the phones' pings and the API's keepalives, nothing sent.
  const pgCpu = new DatabaseCpu((text, values) => probe.query(text, values), DATABASE);
  const before = { api: await cpuSeconds(apiPid()), pg: await pgCpu.seconds(), at: Date.now() };
  await sleep(IDLE_SECONDS * 1000);
  const after = { api: await cpuSeconds(apiPid()), pg: await pgCpu.seconds(), at: Date.now() };
  const span = (after.at - before.at) / 1000;
  const idle = { api: (100 * (after.api - before.api)) / span, pg: (100 * (after.pg - before.pg)) / span };
  const heldRssKb = await rssKb();
  const kbPerStream = (heldRssKb - idleRssKb) / PHONES;
  console.log(`idle: API ${idle.api.toFixed(1)} %, Postgres ${idle.pg.toFixed(1)} % of a core; API RSS ${idleRssKb} KB idle, ${heldRssKb} KB held`);

  // Wake-ups: one send to each of WAKEUPS phones drawn at random, paced.
  const client = new SmsgwClient(cluster.baseUrl, key);
  const chosen = [...deviceIds.keys()].sort(() => Math.random() - 0.5).slice(0, WAKEUPS);
  const sends: { phone: number; startedAt: number; acceptedAt: number }[] = [];
  for (const [i, phone] of chosen.entries()) {
    const startedAt = Date.now();
    await client.send({ recipients: [`+1555${String(i).padStart(7, '0')}`], body: `wake-up ${i}`, device_id: deviceIds[phone]! });
    sends.push({ phone, startedAt, acceptedAt: Date.now() });
    await sleep(WAKEUP_PACE_MS);
  }
  const wokenAt = (s: (typeof sends)[number]) => simLog.firstEvent(s.phone, 'MessageEnqueued', s.startedAt);
  await waitFor('every wake-up', async () => sends.every((s) => wokenAt(s) !== undefined), 60_000).catch((error: unknown) =>
    console.error((error as Error).message),
  );
  const latencies = sends.map((s) => Math.max(0, (wokenAt(s) ?? Infinity) - s.acceptedAt)).sort((a, b) => a - b);
  console.log(`wake-ups: ${latencies.join(' ')} ms`);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;

  // The storm: the API killed and started again; every phone reconnects (after 5 s, the app's delay).
  await sleep(5_000);
  const killedAt = new Date();
  await cluster.kill('api', 'SIGKILL');
  await cluster.startApi();
  const upAt = Date.now();
  const reheldAt = waitFor('every stream held again', async () => (await streamsSince(killedAt)) >= PHONES, 300_000);
  // Available again: listed as available with a sign of life since the restart (the old stream's refresh still counts for a while).
  let walks = 0;
  const availableAt = waitFor(
    'every phone available again',
    async () => {
      walks++;
      const { devices } = await walkDevices(cluster.baseUrl, key, 500);
      return devices.filter((d) => d.available && d.last_seen_at !== null && Date.parse(d.last_seen_at) >= killedAt.getTime()).length >= PHONES;
    },
    300_000,
  );
  // Not within the wait: a miss printed as such (Infinity), not a crash.
  const since = (at: Promise<number>) =>
    at.then(
      (t) => t - killedAt.getTime(),
      () => Infinity,
    );
  const storm = { held: await since(reheldAt), available: await since(availableAt) };
  await sleep(2_000);
  const answers = simLog.failuresSince(killedAt.getTime());
  pgCpu.stop();

  const [load1, load5] = (await readFile('/proc/loadavg', 'utf8')).split(' ');
  const rows: [string, string, string, boolean][] = [
    [
      'API RSS per held stream',
      `${kbPerStream.toFixed(1)} KB (${(idleRssKb / 1024).toFixed(0)} MB idle, ${(heldRssKb / 1024).toFixed(0)} MB with ${PHONES} streams)`,
      `<= ${TARGETS.kbPerStream} KB`,
      kbPerStream <= TARGETS.kbPerStream,
    ],
    [
      `idle CPU, ${IDLE_SECONDS} s, % of a core`,
      `${(idle.api + idle.pg).toFixed(1)} % (API ${idle.api.toFixed(1)} %, Postgres ${idle.pg.toFixed(1)} %)`,
      `<= ${TARGETS.idleCpuPercent} %`,
      idle.api + idle.pg <= TARGETS.idleCpuPercent,
    ],
    [
      `wake-up, ${WAKEUPS} sends (202 → MessageEnqueued)`,
      `p50 ${pct(50)} ms, p99 ${pct(99)} ms`,
      `p99 <= ${TARGETS.wakeupP99Ms} ms`,
      pct(99) <= TARGETS.wakeupP99Ms,
    ],
    [
      'storm: 5xx, refusals (401/429)',
      `${answers.serverErrors}, ${answers.refusals} (${answers.unreachable} calls found the API down; ${walks} walks)`,
      '0, 0',
      answers.serverErrors === 0 && answers.refusals === 0,
    ],
    [
      'storm: every stream held again',
      `${(storm.held / 1000).toFixed(1)} s after the kill (API up after ${((upAt - killedAt.getTime()) / 1000).toFixed(1)} s)`,
      '-',
      true,
    ],
    [
      'storm: every phone available again',
      `${(storm.available / 1000).toFixed(1)} s after the kill`,
      `<= ${TARGETS.availableSeconds} s`,
      storm.available <= TARGETS.availableSeconds * 1000,
    ],
  ];
  console.log(`\nsmsgw phones benchmark: ${PHONES} SMS Gate phones, one API, one dispatcher, one simulator; load average ${load1} ${load5}`);
  for (const [what, figure, target, met] of rows) console.log(`${what.padEnd(42)} ${figure.padEnd(70)} ${target.padEnd(14)} ${met ? 'met' : 'NOT met'}`);
  if (rows.some(([, , , met]) => !met)) process.exitCode = 1;
} finally {
  await cluster.stop();
  await probe.end();
  await db.$disconnect();
  await rm(logDir, { recursive: true, force: true });
}
