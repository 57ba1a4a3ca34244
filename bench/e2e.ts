import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmsgwClient } from '@smsgw/client';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { createApiKey, createDevice, createUser } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { recreateDatabase } from '@smsgw/db/testing';
import { buildProcesses, sentIds, startCluster } from '../test/support/cluster.ts';
import { cpuOf, cpuSeconds, DatabaseCpu, settled } from './cpu.ts';
import { createPairings } from './phone-fleet.ts';

/**
 * `./pnpmw bench:e2e`: first the floor (bench/floor.ts, in a process of its own), then the real
 * processes (one API, two dispatchers, ten simulated devices with no artificial delay); 20,000
 * messages sent in requests of 1,000. Prints messages per second from the first accept to the last
 * delivery and its share of the floor measured in the same run, p50/p99 of accept-to-delivered
 * latency, and the peak memory of each process. Targets (issue 15): >= 80 % of the floor, API and
 * dispatchers each at most 150 MB. BENCH_FLOOR=0 skips the floor (and its target).
 * With BENCH_WEBHOOKS=1 the user also has a webhook endpoint for message.delivered (a receiver on
 * loopback answering 204), and it prints the delivered-to-received latency of the webhooks.
 * BENCH_PROTOCOL=sms-gate runs the ten phones as simulated SMS Gate phones instead (the mobile API:
 * pull, one PATCH per state change), each enrolled with a pairing of the bench user; the rate
 * target applies to the native protocol only, so that the figures of the two can be compared.
 * BENCH_PROTOCOL=both runs the two one after the other and prints the SMS Gate path's share of the
 * native throughput, and its Postgres CPU per message against native's. Each run prints the API's
 * and its database's Postgres CPU per message, and for SMS Gate phones the `PATCH /message` times
 * as the phones saw them. BENCH_DATABASE names its database (default smsgw_bench_e2e), dropped
 * and created anew.
 */
const TOTAL = Number(process.env.BENCH_MESSAGES ?? 20_000);
const PER_REQUEST = 1000;
const DEVICES = 10;
const DISPATCHERS = 2;
const TARGET_SHARE = 0.8;
const MEMORY_LIMIT_MB = 150;
const PROTOCOL = process.env.BENCH_PROTOCOL ?? 'native';
if (PROTOCOL === 'both') bothProtocols();
if (PROTOCOL !== 'native' && PROTOCOL !== 'sms-gate') throw new Error(`BENCH_PROTOCOL must be native, sms-gate or both, not ${PROTOCOL}`);

/**
 * BENCH_PROTOCOL=both: this benchmark once per protocol, one after the other in processes of their
 * own (each prints its figures as it runs), then the SMS Gate path's throughput as a share of the
 * native one's in the same session (issue 27: target at least 40 %).
 */
function bothProtocols(): never {
  const rates: Record<string, number> = {};
  const pgPerMessage: Record<string, number> = {};
  let failed = false;
  for (const protocol of ['native', 'sms-gate']) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/e2e.ts'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_PROTOCOL: protocol },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.stdout.write(run.stdout);
    const rate = Number(/=> {2}(\d+) messages\/s/.exec(run.stdout)?.[1]);
    if (!Number.isFinite(rate)) throw new Error(`the ${protocol} run printed no rate (exit ${run.status})`);
    rates[protocol] = rate;
    pgPerMessage[protocol] = Number(/Postgres CPU \/ message +([\d.]+) ms/.exec(run.stdout)?.[1]);
    failed ||= run.status !== 0;
  }
  const share = rates['sms-gate']! / rates.native!;
  console.log(`SMS Gate / native    ${rates['sms-gate']} / ${rates.native} messages/s = ${Math.round(share * 100)} % (target >= 40 %)`);
  const postgres = pgPerMessage['sms-gate']! / pgPerMessage.native!;
  console.log(
    `Postgres CPU/message SMS Gate / native ${pgPerMessage['sms-gate']!.toFixed(2)} / ${pgPerMessage.native!.toFixed(2)} ms = ${postgres.toFixed(1)} times (target <= 3)`,
  );
  process.exit(failed || share < 0.4 ? 1 : 0);
}
const SIM_PROCESSES = new Set(['devices', 'phones']);

// The floor in the same run, on the same machine in the same state: the ratio is what is compared.
const floorRate = process.env.BENCH_FLOOR === '0' ? undefined : measureFloor();
function measureFloor(): number {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/floor.ts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const rate = Number(/at most (\d+) messages\/s/.exec(run.stdout)?.[1]);
  if (run.status !== 0 || !Number.isFinite(rate)) throw new Error(`bench/floor.ts failed: ${run.stdout}`);
  return rate;
}

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DATABASE = process.env.BENCH_DATABASE ?? 'smsgw_bench_e2e';
const databaseUrl = await recreateDatabase(baseUrl, DATABASE);

const db = createDb({ url: databaseUrl, poolSize: 2 });
const user = await createUser(db, { name: 'bench', monthlyQuota: 1_000_000_000 });
const { key } = await createApiKey(db, { userId: user.id, name: 'bench' });
const WEBHOOKS = process.env.BENCH_WEBHOOKS === '1';
const received = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: string } }).data.id;
    if (!received.has(id)) received.set(id, Date.now());
    res.statusCode = 204;
    res.end();
  });
});
if (WEBHOOKS) {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  await db.webhook.create({ data: { id: newId(), userId: user.id, url, events: ['message.delivered'], secret: generateWebhookSecret() } });
}
const tokens: string[] = [];
if (PROTOCOL === 'native') for (let i = 0; i < DEVICES; i++) tokens.push((await createDevice(db, { userId: user.id, name: `sim-${i}` })).token);
// Half the phones enrol by code ("Sign in by code"), half by pairing token ("Sign up").
const pairings = PROTOCOL === 'native' ? [] : (await createPairings(db, user.id, DEVICES)).map((p, i) => (i % 2 === 0 ? p.code : p.token));

buildProcesses();
const logDir = await mkdtemp(join(tmpdir(), 'smsgw-bench-'));
const cluster = await startCluster({
  databaseUrl,
  queuePrefix: `smsgw-bench-${randomBytes(4).toString('hex')}`,
  dispatchers: DISPATCHERS,
  deviceTokens: tokens,
  pairings,
  logDir,
  env: { RATE_LIMIT_PER_MINUTE: '100000', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true' },
  simEnv: { SIM_SEND_MS: '0', SIM_DELIVER_MS: '0', SIM_CLAIM_LIMIT: '500', SIM_PATCH_TIMES_FILE: join(logDir, 'patch-ms.txt') },
});
await settled([...cluster.processes.values()].map((child) => child.pid!));

async function cpuSnapshot(): Promise<Record<string, number>> {
  const snapshot: Record<string, number> = {};
  for (const [name, child] of cluster.processes) snapshot[name] = await cpuSeconds(child.pid!);
  snapshot.postgres = await cpuOf('postgres');
  snapshot.redis = await cpuOf('redis-server');
  return snapshot;
}

const databaseCpuUse = new DatabaseCpu((text, values) => db.query(text, values), DATABASE, 250);
const cpuBefore = await cpuSnapshot();
const client = new SmsgwClient(cluster.baseUrl, key);
const acceptedAt = new Map<string, number>();
const started = Date.now();
for (let r = 0; r < TOTAL / PER_REQUEST; r++) {
  const recipients = Array.from({ length: PER_REQUEST }, (_, i) => `+1555${String(r * PER_REQUEST + i).padStart(7, '0')}`);
  const result = await client.send({ recipients, body: `benchmark message ${r}` });
  const at = Date.now();
  for (const id of result.message_ids) acceptedAt.set(id, at);
}
const sendDone = Date.now();

const deadline = Date.now() + 600_000;
// Waiting asks only whether any message is still on its way (an index probe), not for a count of
// the delivered ones (a scan that grows with the run): the benchmark must not load the machine it measures.
const onTheirWay = async () =>
  (await db.message.findFirst({ where: { state: { in: ['pending', 'assigned', 'sending', 'sent'] } }, select: { id: true } })) !== null;
while ((await onTheirWay()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
const delivered = await db.message.count({ where: { state: 'delivered' } });

while (WEBHOOKS && received.size < TOTAL && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

const memory: Record<string, number> = {};
for (const [name, child] of cluster.processes) {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
  const kb = Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0);
  memory[name] = Math.round(kb / 1024);
}
const cpuAfter = await cpuSnapshot();
const databaseSeconds = await databaseCpuUse.seconds();
databaseCpuUse.stop();
const rows = await db.message.findMany({ where: { state: 'delivered' }, select: { id: true, deliveredAt: true } });
const latencies = rows.map((r) => r.deliveredAt!.getTime() - acceptedAt.get(r.id)!).sort((a, b) => a - b);
const lastDelivered = Math.max(...rows.map((r) => r.deliveredAt!.getTime()));
const webhookLatencies = rows
  .filter((r) => received.has(r.id))
  .map((r) => received.get(r.id)! - r.deliveredAt!.getTime())
  .sort((a, b) => a - b);
const sent = await sentIds(logDir);
receiver.close();
await cluster.stop();
// After the stop: the phones have written every line.
const patchTimes = (await readFile(join(logDir, 'patch-ms.txt'), 'utf8').catch(() => ''))
  .split('\n')
  .filter(Boolean)
  .map(Number)
  .sort((a, b) => a - b);
await db.$disconnect();
await rm(logDir, { recursive: true, force: true });

const seconds = (lastDelivered - started) / 1000;
const rate = TOTAL / seconds;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const pct = (p: number) => percentile(latencies, p);
const duplicates = sent.length - new Set(sent).size;
console.log(
  `smsgw end-to-end benchmark: ${TOTAL} messages, ${TOTAL / PER_REQUEST} requests, ${DISPATCHERS} dispatchers, ${DEVICES} ${PROTOCOL} devices (one simulator process)`,
);
console.log(`delivered            ${delivered} of ${TOTAL} (sent twice: ${duplicates})`);
console.log(`sending took         ${((sendDone - started) / 1000).toFixed(2)} s`);
console.log(`first accept → last delivered  ${seconds.toFixed(2)} s  =>  ${Math.round(rate)} messages/s`);
const share = floorRate === undefined ? undefined : rate / floorRate;
if (share !== undefined) {
  console.log(
    `floor (same run)     at most ${floorRate} messages/s: this run is ${Math.round(100 * share)} % of it (target >= ${100 * TARGET_SHARE} %${PROTOCOL === 'native' ? '' : ', native only'})`,
  );
}
console.log(`accept → delivered   p50 ${pct(50)} ms, p99 ${pct(99)} ms`);
if (WEBHOOKS) {
  console.log(
    `webhooks received    ${received.size} of ${TOTAL}; delivered → received p50 ${percentile(webhookLatencies, 50)} ms, p99 ${percentile(webhookLatencies, 99)} ms`,
  );
}
console.log(
  `peak memory (MB)     ${Object.entries(memory)
    .map(([n, mb]) => `${n} ${mb}`)
    .join(', ')} (API and dispatchers: target <= ${MEMORY_LIMIT_MB})`,
);
console.log(
  `CPU seconds          ${Object.keys(cpuAfter)
    .map((n) => `${n} ${(cpuAfter[n]! - (cpuBefore[n] ?? 0)).toFixed(1)}`)
    .join(', ')}`,
);
const apiSeconds = cpuAfter.api! - (cpuBefore.api ?? 0);
console.log(`API CPU / message    ${((1000 * apiSeconds) / TOTAL).toFixed(2)} ms${PROTOCOL === 'sms-gate' ? ' (target <= 1 ms)' : ''}`);
console.log(`Postgres CPU / message ${((1000 * databaseSeconds) / TOTAL).toFixed(2)} ms (backends of ${DATABASE} only: ${databaseSeconds.toFixed(1)} s)`);
if (patchTimes.length > 0) {
  console.log(
    `PATCH /message       p50 ${percentile(patchTimes, 50).toFixed(1)} ms, p99 ${percentile(patchTimes, 99).toFixed(1)} ms as the phones saw it (${patchTimes.length} requests, ${(patchTimes.length / TOTAL).toFixed(2)} a message; target p99 <= 100 ms)`,
  );
}
const heavy = Object.entries(memory).filter(([n, mb]) => !SIM_PROCESSES.has(n) && mb > MEMORY_LIMIT_MB);
const slow = PROTOCOL === 'native' && share !== undefined && share < TARGET_SHARE;
if ((WEBHOOKS && received.size < TOTAL) || delivered < TOTAL || duplicates > 0 || slow || heavy.length > 0) process.exitCode = 1;
