import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmsgwClient } from '@smsgw/client';
import { createApiKey, createDevice, createUser } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { recreateDatabase } from '@smsgw/db/testing';
import { buildProcesses, sentIds } from '../test/support/cluster.ts';
import { removeLeftoverHosts } from '../test/topologies/support/netns.ts';
import { startHosts } from '../test/topologies/support/hosts.ts';
import { sendRoundTrips } from '../test/topologies/support/round-trips.ts';

/**
 * `./pnpmw bench:hosts` (as root: it makes network namespaces): smsgw on two hosts (issue 28,
 * "Several hosts"; test/topologies/support/hosts.ts), an API and a dispatcher on each, the ten
 * simulated devices (native protocol, no artificial delay) on host a's API and every send to host
 * b's; run twice, with 1 ms each way between the hosts and Postgres and Redis, then with all on
 * loopback. Each run prints accept → delivered messages per second for HOSTS_MESSAGES (default
 * 5,000) sent in requests of 1,000, and the p50/p99 of 200 one-recipient sends one after another;
 * the delayed run also the round trips a one-recipient send makes to Postgres and to Redis
 * (target: at most 2 each).
 */
const TOTAL = Number(process.env.HOSTS_MESSAGES ?? 5000);
const PER_REQUEST = 1000;
const DEVICES = 10;
const SINGLE_SENDS = 200;

buildProcesses();
removeLeftoverHosts();
const rows: string[] = [];
for (const delayMs of [1, undefined]) rows.push(await run(delayMs));
console.log(rows.join('\n'));

async function run(delayMs: number | undefined): Promise<string> {
  const databaseUrl = await recreateDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', 'smsgw_bench_hosts');
  const db = createDb({ url: databaseUrl, poolSize: 2 });
  const user = await createUser(db, { name: 'bench', monthlyQuota: 1_000_000_000 });
  const { key } = await createApiKey(db, { userId: user.id, name: 'bench' });
  const tokens: string[] = [];
  for (let i = 0; i < DEVICES; i++) tokens.push((await createDevice(db, { userId: user.id, name: `sim-${i}` })).token);
  const logDir = await mkdtemp(join(tmpdir(), 'smsgw-bench-hosts-'));
  const hosts = await startHosts({
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    queuePrefix: `smsgw-bench-${randomBytes(4).toString('hex')}`,
    logDir,
    deviceTokens: tokens,
    ...(delayMs !== undefined && { delayMs }),
    env: { RATE_LIMIT_PER_MINUTE: '1000000' },
    simEnv: { SIM_SEND_MS: '0', SIM_DELIVER_MS: '0', SIM_CLAIM_LIMIT: '500' },
  });
  try {
    const client = new SmsgwClient(hosts.apiUrl.b, key);
    const started = Date.now();
    for (let r = 0; r < TOTAL / PER_REQUEST; r++) {
      await client.send({
        recipients: Array.from({ length: PER_REQUEST }, (_, i) => `+1555${String(r * PER_REQUEST + i).padStart(7, '0')}`),
        body: `bench ${r}`,
      });
    }
    const deadline = Date.now() + 300_000;
    while (
      (await db.message.findFirst({ where: { state: { in: ['pending', 'assigned', 'sending', 'sent'] } }, select: { id: true } })) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const last = await db.message.findFirst({ where: { state: 'delivered' }, orderBy: { deliveredAt: 'desc' }, select: { deliveredAt: true } });
    const rate = TOTAL / ((last!.deliveredAt!.getTime() - started) / 1000);
    const sent = await sentIds(logDir);
    const times: number[] = [];
    for (let i = 0; i < SINGLE_SENDS; i++) {
      const at = performance.now();
      await client.send({ recipients: [`+1666${String(i).padStart(7, '0')}`], body: 'one' });
      times.push(performance.now() - at);
    }
    times.sort((a, b) => a - b);
    const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(1);
    const links = hosts.links.get('api-b');
    const trips = links
      ? await sendRoundTrips(links, async (i) => void (await client.send({ recipients: [`+1777${String(i).padStart(7, '0')}`], body: 'counted' })))
      : undefined;
    const where = delayMs === undefined ? 'loopback       ' : `${delayMs} ms each way`;
    return [
      `${where}  accept → delivered ${Math.round(rate)} messages/s (${TOTAL}, sent ${sent.length}, twice ${sent.length - new Set(sent).size})`,
      `${' '.repeat(where.length)}  one-recipient send p50 ${pct(50)} ms, p99 ${pct(99)} ms`,
      ...(trips
        ? [`${' '.repeat(where.length)}  round trips per one-recipient send: Postgres ${trips.postgres}, Redis ${trips.redis} (target <= 2 each)`]
        : []),
    ].join('\n');
  } finally {
    await hosts.stop();
    await db.$disconnect();
    await rm(logDir, { recursive: true, force: true });
  }
}
