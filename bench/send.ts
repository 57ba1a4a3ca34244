import { performance } from 'node:perf_hooks';
import { newId, segmentInfo } from '@smsgw/core';
import { storeSend } from '@smsgw/db';
import { enqueueDispatch } from '@smsgw/queue';
import { startBenchApi } from './bench-api.ts';

/**
 * `pnpm bench:send`: the time of an HTTP send of 1, 1,000 and 10,000 recipients (median of several
 * runs), beside the floor: the same rows inserted with one bulk statement and the same jobs added
 * with one addBulk, straight from Node. Target: HTTP <= 1.5x the floor at 1,000 and 10,000.
 * Runs on a database of its own (smsgw_bench, recreated) and a queue prefix of its own.
 */
const SIZES = [
  { recipients: 1, runs: 21 },
  { recipients: 1000, runs: 11 },
  { recipients: 10000, runs: 7 },
];
const WARMUP = 2;
const TARGET_RATIO = 1.5;

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
  await storeSend(app.sql, {
    ids, recipients, texts: { kind: 'same', body, segments, encoding }, userId: user.id,
    batch: null, requestedDeviceId: null, createdAt: new Date(),
  }, null);
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
for (const { recipients: n, runs } of SIZES) {
  const http: number[] = [];
  const floors: { total: number; insert: number; enqueue: number }[] = [];
  for (let i = 0; i < WARMUP + runs; i++) {
    // Alternate the two so that both see the same state of Postgres and Redis.
    const h = await httpSend(n);
    const f = await floor(n);
    if (i >= WARMUP) {
      http.push(h);
      floors.push(f);
    }
  }
  const h = median(http);
  const f = median(floors.map((x) => x.total));
  const ratio = h / f;
  const checked = n >= 1000;
  if (checked && ratio > TARGET_RATIO) failed = true;
  console.log(
    `${String(n).padStart(10)}  ${String(runs).padStart(4)}  ${h.toFixed(1).padStart(6)}  ` +
      `${f.toFixed(1).padStart(6)} (${median(floors.map((x) => x.insert)).toFixed(1)} + ${median(floors.map((x) => x.enqueue)).toFixed(1)})`.padEnd(27) +
      `  ${ratio.toFixed(2).padStart(5)}  ${checked ? (ratio <= TARGET_RATIO ? `<= ${TARGET_RATIO} ok` : `> ${TARGET_RATIO} MISSED`) : '-'}`,
  );
}

await bench.close();
if (failed) process.exitCode = 1;
