import { performance } from 'node:perf_hooks';
import { createDevice } from '@smsgw/db';
import { startBenchApi } from './bench-api.ts';

/**
 * `./pnpmw bench:list`: the first page of GET /api/v1/sms (limit 20), p50 and p95 over RUNS
 * requests, for one user with 100,000 and then 1,000,000 messages (seeded in bulk, one
 * INSERT … SELECT per 100,000: 90 % delivered, the rest failed, sent, queued; 4 devices; batches
 * of 100; 50,000 recipients). Runs on a database of its own (smsgw_bench_list, recreated).
 *
 * Fresh (issue 27, item 6): no filter, status=queued and batch_id, measured right after each bulk
 * load with autovacuum off on the tables and no VACUUM or ANALYZE yet (no statistics, no visibility
 * map, hint bits unset), as a listing right after an import meets them. Targets: p95 <= 20 ms at 1M
 * and p95 at 1M / p95 at 100k <= 1.5.
 * Vacuumed (issue 15): then VACUUM ANALYZE, and every single filter at 1M: p95 <= 50 ms.
 */
const RUNS = 200;
const WARMUP = 20;
const STEPS = [100_000, 1_000_000] as const;
const CHUNK = 100_000;
const FRESH_TARGET_P95_MS = 20;
const FRESH_TARGET_RATIO = 1.5;
const VACUUMED_TARGET_P95_MS = 50;

const bench = await startBenchApi('smsgw_bench_list');
const { app, address, user, apiKey } = bench;
for (const table of ['messages', 'batches']) await app.sql.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`);
const devices: string[] = [];
for (let i = 0; i < 4; i++) devices.push((await createDevice(app.sql, { userId: user.id, name: `list-phone-${i}` })).device.id);

/** Messages n in [from, to): created 10 ms apart, so the newest are the last seeded. */
async function seed(from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK) - 1;
    await app.sql.query(
      `INSERT INTO batches (id, user_id, recipients_count, created_at)
       SELECT md5($1 || ':' || b)::uuid, $1::uuid, 100, timestamptz '2025-01-01' + b * 100 * interval '10 milliseconds'
         FROM generate_series($2::int / 100, $3::int / 100) b
       ON CONFLICT DO NOTHING`,
      [user.id, start, end],
    );
    await app.sql.query(
      `INSERT INTO messages (id, user_id, batch_id, device_id, to_number, body, segments, encoding, state, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, md5($1 || ':' || (n / 100))::uuid,
              CASE WHEN n % 100 < 2 THEN NULL ELSE ($4::uuid[])[1 + n % 4] END,
              '+1555' || lpad((n % 50000)::text, 7, '0'), 'Your code is 123456', 1, 'GSM-7',
              (CASE WHEN n % 100 < 1 THEN 'pending' WHEN n % 100 < 2 THEN 'pending' WHEN n % 100 < 5 THEN 'sent' WHEN n % 100 < 10 THEN 'failed' ELSE 'delivered' END)::message_state,
              timestamptz '2025-01-01' + n * interval '10 milliseconds', now()
         FROM generate_series($2::int, $3::int) n`,
      [user.id, start, end, devices],
    );
  }
}

/** A batch in the middle of the history seeded so far. */
async function middleBatch(seeded: number): Promise<string> {
  const { rows } = await app.sql.query<{ id: string }>(`SELECT md5($1 || ':' || $2::int)::uuid AS id`, [user.id, Math.floor(seeded / 200)]);
  return rows[0]!.id;
}

async function timeList(query: string): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const started = performance.now();
    const res = await fetch(`${address}/api/v1/sms?limit=20${query ? `&${query}` : ''}`, { headers: { 'x-api-key': apiKey } });
    if (res.status !== 200) throw new Error(`GET /api/v1/sms?${query}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(RUNS * 0.5)]!, p95: times[Math.floor(RUNS * 0.95)]! };
}

type Timings = Record<string, { p50: number; p95: number }>;
const ms = (n: number, width: number) => n.toFixed(1).padStart(width);

const fresh: Timings[] = [];
let seeded = 0;
for (const size of STEPS) {
  const started = performance.now();
  await seed(seeded, size);
  seeded = size;
  console.log(`seeded ${size.toLocaleString('en')} messages (${((performance.now() - started) / 1000).toFixed(1)} s for this step), no VACUUM or ANALYZE`);
  const batch = await middleBatch(size);
  fresh.push({ none: await timeList(''), 'status=queued': await timeList('status=queued'), 'batch_id=': await timeList(`batch_id=${batch}`) });
}

console.log(`\nfresh (before autovacuum): first page (limit 20), ${RUNS} requests each, ms   p50 @100k  p95 @100k   p50 @1M   p95 @1M   p95 1M/100k`);
let freshOk = true;
for (const name of Object.keys(fresh[0]!)) {
  const [a, b] = [fresh[0]![name]!, fresh[1]![name]!];
  const ratio = b.p95 / a.p95;
  const pass = b.p95 <= FRESH_TARGET_P95_MS && ratio <= FRESH_TARGET_RATIO;
  freshOk &&= pass;
  console.log(`${name.padEnd(70)} ${ms(a.p50, 9)} ${ms(a.p95, 10)} ${ms(b.p50, 9)} ${ms(b.p95, 9)} ${ratio.toFixed(2).padStart(13)}  ${pass ? 'ok' : 'OVER'}`);
}
console.log(`targets (fresh): p95 <= ${FRESH_TARGET_P95_MS} ms at 1M and p95 1M/100k <= ${FRESH_TARGET_RATIO}: ${freshOk ? 'met' : 'NOT met'}`);

await app.sql.query('VACUUM ANALYZE messages');
await app.sql.query('VACUUM ANALYZE batches');
const FILTERS: Record<string, string> = {
  none: '',
  'status=delivered': 'status=delivered',
  'status=failed': 'status=failed',
  'status=queued': 'status=queued',
  'to=': 'to=%2B15550001234',
  'device_id=': `device_id=${devices[1]}`,
  'batch_id=': `batch_id=${await middleBatch(seeded)}`,
};
console.log(`\nvacuumed (after VACUUM ANALYZE) at 1M, ${RUNS} requests each, ms   p50 @1M   p95 @1M`);
let vacuumedOk = true;
for (const [name, query] of Object.entries(FILTERS)) {
  const t = await timeList(query);
  const pass = t.p95 <= VACUUMED_TARGET_P95_MS;
  vacuumedOk &&= pass;
  console.log(`${name.padEnd(56)} ${ms(t.p50, 9)} ${ms(t.p95, 9)}  ${pass ? 'ok' : 'OVER'}`);
}
console.log(`target (vacuumed): p95 <= ${VACUUMED_TARGET_P95_MS} ms at 1M: ${vacuumedOk ? 'met' : 'NOT met'}`);
await bench.close();
