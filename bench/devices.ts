import { startBenchApi } from './bench-api.ts';
import { walkDevices } from './phone-fleet.ts';

/**
 * `./pnpmw bench:devices`: GET /api/v1/devices for one user with 5,000 devices (SMS Gate phones
 * registered in bulk, each seen a moment ago, with SIM cards), a walk over every page following
 * `next_cursor`, ROUNDS times, at the default page size and at the largest: each page's p50, p95
 * and max, and a whole walk's time. Target (issue 27, item 2): <= 50 ms a page at the default size.
 * Runs on a database of its own (smsgw_bench_devices, recreated).
 */
const DEVICES = 5_000;
const ROUNDS = 5;
const TARGET_PAGE_MS = 50;

const bench = await startBenchApi('smsgw_bench_devices');
const { app, address, user, apiKey } = bench;
await app.sql.query(
  `INSERT INTO devices (id, user_id, name, token_hash, protocol, last_seen_at, app_version, sim_cards, created_at, updated_at)
   SELECT gen_random_uuid(), $1::uuid, 'phone-' || n, decode(md5($1 || ':' || n), 'hex'), 'sms_gate', now(), '1.68.0',
          '[{"slotIndex":0,"simNumber":1,"phoneNumber":"*******4567"}]'::jsonb, now() - (5000 - n) * interval '1 second', now()
     FROM generate_series(1, $2::int) n`,
  [user.id, DEVICES - 1],
);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
console.log(
  `${DEVICES.toLocaleString('en')} devices, ${ROUNDS} walks each (one warm-up walk first), ms   pages  p50/page  p95/page  max/page  whole walk (median)`,
);
let ok = true;
for (const limit of [undefined, 500]) {
  await walkDevices(address, apiKey, limit);
  const pages: number[] = [];
  const walks: number[] = [];
  let seen = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const result = await walkDevices(address, apiKey, limit);
    pages.push(...result.pages);
    walks.push(result.total);
    seen = result.devices.length;
  }
  if (seen !== DEVICES) throw new Error(`a walk saw ${seen} devices, not ${DEVICES}`);
  pages.sort((a, b) => a - b);
  walks.sort((a, b) => a - b);
  const p95 = pct(pages, 0.95);
  if (limit === undefined) ok = p95 <= TARGET_PAGE_MS;
  const name = limit === undefined ? 'default page size' : `limit=${limit}`;
  console.log(
    `${name.padEnd(76)} ${String(pages.length / ROUNDS).padStart(5)} ${pct(pages, 0.5).toFixed(1).padStart(9)} ${p95.toFixed(1).padStart(9)} ${pages.at(-1)!.toFixed(1).padStart(9)} ${pct(walks, 0.5).toFixed(0).padStart(12)}`,
  );
}
console.log(`target: p95 <= ${TARGET_PAGE_MS} ms a page at the default size: ${ok ? 'met' : 'NOT met'}`);
await bench.close();
