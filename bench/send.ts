import { performance } from 'node:perf_hooks';
import { newId, segmentInfo } from '@smsgw/core';
import { storeSend } from '@smsgw/db';
import { enqueueDispatch } from '@smsgw/queue';
import { startBenchApi } from './bench-api.ts';

/**
 * `./pnpmw bench:send`: the time of an HTTP send of 1, 1,000 and 10,000 recipients (median of several
 * runs), beside the floor: the same rows inserted with one bulk statement and the same jobs added
 * with one addBulk, straight from Node. Targets: HTTP <= 2x the floor for one recipient, <= 1.5x at
 * 1,000 and 10,000. Then one-recipient sends with 32 in flight, in requests per second beside the
 * floor's at the same concurrency.
 * Runs on a database of its own (smsgw_bench, recreated) and a queue prefix of its own.
 */
const SIZES = [
  // The most common request (codes, alerts): many runs, as each takes a few milliseconds.
  { recipients: 1, runs: 301, warmup: 50, target: 2 },
  { recipients: 1000, runs: 11, warmup: 2, target: 1.5 },
  { recipients: 10000, runs: 7, warmup: 2, target: 1.5 },
];
// One-recipient sends kept in flight at once, and how many in all, for the throughput figure.
const CONCURRENCY = 32;
const CONCURRENT_TOTAL = 3200;

const bench = await startBenchApi('smsgw_bench');
const { app, address, user, apiKey: key } = bench;
const { dispatchQueue: queue } = app;

let counter = 0;
function numbers(n: number): string[] {
  const start = counter;
  counter += n;
  return Array.from({ length: n }, (_, i) => `+1555${String(start + i).padStart(7, '0')}`);
}
const body = 'Your verification code is 123456. It expires in 10 minutes.';

async function httpSend(n: number): Promise<number> {
  const payload = JSON.stringify({ recipients: numbers(n), body });
  const started = performance.now();
  const res = await fetch(`${address}/api/sms/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: payload,
  });
  const json = (await res.json()) as { recipients_count?: number };
  const elapsed = performance.now() - started;
  if (res.status !== 200 || json.recipients_count !== n) throw new Error(`send failed: ${res.status} ${JSON.stringify(json)}`);
  return elapsed;
}

async function floor(n: number): Promise<{ total: number; insert: number; enqueue: number }> {
  const recipients = numbers(n);
  const ids = recipients.map(() => newId());
  const { segments, encoding } = segmentInfo(body);
  const started = performance.now();
  await storeSend(
    app.sql,
    {
      ids,
      recipients,
      texts: { kind: 'same', body, segments, encoding },
      userId: user.id,
      batch: null,
      requestedDeviceId: null,
      createdAt: new Date(),
    },
    null,
  );
  const inserted = performance.now();
  await enqueueDispatch(queue, ids);
  const done = performance.now();
  return { total: done - started, insert: inserted - started, enqueue: done - inserted };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

console.log(`smsgw send benchmark (node ${process.version}); medians in ms\n`);
console.log('recipients  runs   http   floor (insert + addBulk)   ratio  target');
let failed = false;
for (const { recipients: n, runs, warmup, target } of SIZES) {
  const http: number[] = [];
  const floors: { total: number; insert: number; enqueue: number }[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    // Alternate the two so that both see the same state of Postgres and Redis.
    const h = await httpSend(n);
    const f = await floor(n);
    if (i >= warmup) {
      http.push(h);
      floors.push(f);
    }
  }
  const h = median(http);
  const f = median(floors.map((x) => x.total));
  const ratio = h / f;
  if (ratio > target) failed = true;
  console.log(
    `${String(n).padStart(10)}  ${String(runs).padStart(4)}  ${h.toFixed(1).padStart(6)}  ` +
      `${f.toFixed(1).padStart(6)} (${median(floors.map((x) => x.insert)).toFixed(1)} + ${median(floors.map((x) => x.enqueue)).toFixed(1)})`.padEnd(27) +
      `  ${ratio.toFixed(2).padStart(5)}  ${ratio <= target ? `<= ${target} ok` : `> ${target} MISSED`}`,
  );
}

/** Requests per second of `run`, CONCURRENT_TOTAL of them with CONCURRENCY in flight. */
async function throughput(run: () => Promise<unknown>): Promise<number> {
  let left = CONCURRENT_TOTAL;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await run();
    }),
  );
  return CONCURRENT_TOTAL / ((performance.now() - started) / 1000);
}
await throughput(() => httpSend(1)); // warm-up
const httpRate = await throughput(() => httpSend(1));
const floorRate = await throughput(() => floor(1));
console.log(
  `\none-recipient sends, ${CONCURRENCY} in flight: http ${httpRate.toFixed(0)}/s, floor ${floorRate.toFixed(0)}/s, ` +
    `${((100 * httpRate) / floorRate).toFixed(0)} % of the floor`,
);

await bench.close();
if (failed) process.exitCode = 1;
