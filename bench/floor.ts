import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { Worker } from 'bullmq';
import { newId, segmentInfo } from '@smsgw/core';
import { applyReports, assignMessages, offerMessages, createDevice, createSql, createUser, storeSend } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { recreateDatabase } from '@smsgw/db/testing';
import { JOBS, createWorkerConnection, deletePrefix, enqueueDispatch, createDispatchQueue, createProducerConnection } from '@smsgw/queue';
import { serviceCpu } from './cpu.ts';

/**
 * `pnpm bench:floor`: what this machine can do at best for the pipeline of `pnpm bench:e2e`, with
 * nothing but the unavoidable work, each part alone: (1) the message rows through their lifecycle
 * in Postgres (one insert per 1,000, then assign, claim, sent and delivered in batches of 500, each
 * with its history) and (2) one BullMQ job per message added in bulks of 1,000 and consumed by a
 * worker that does nothing. Their CPU seconds, summed and spread over every core, bound the
 * end-to-end rate from above, before any HTTP, device or dispatcher logic.
 */
const TOTAL = Number(process.env.BENCH_MESSAGES ?? 20_000);
const DEVICES = 10;
const PER_SEND = 1000;
const BATCH = 500;

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const databaseUrl = await recreateDatabase(baseUrl, 'smsgw_bench_floor');
const db = createDb({ url: databaseUrl, poolSize: 4 });
const sql = createSql({ url: databaseUrl, poolSize: 10 });
const user = await createUser(db, { name: 'floor', monthlyQuota: null });
const devices: string[] = [];
for (let i = 0; i < DEVICES; i++) devices.push((await createDevice(db, { userId: user.id, name: `d${i}` })).device.id);

async function measure(name: string, run: () => Promise<void>): Promise<{ name: string; seconds: number; cpu: number; detail: string }> {
  const before = await serviceCpu();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const after = await serviceCpu();
  const parts = { postgres: after.postgres - before.postgres, redis: after.redis - before.redis, node: after.node - before.node };
  const cpu = parts.postgres + parts.redis + parts.node;
  return {
    name,
    seconds,
    cpu,
    detail: Object.entries(parts)
      .map(([n, s]) => `${n} ${s.toFixed(1)}`)
      .join(', '),
  };
}

const chunks = <T>(items: T[], size: number) => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

const ids: string[] = [];
const postgres = await measure('Postgres: insert, assign, claim, sent, delivered', async () => {
  const text = 'benchmark message';
  const info = segmentInfo(text);
  for (let s = 0; s < TOTAL / PER_SEND; s++) {
    const batchIds = Array.from({ length: PER_SEND }, () => newId());
    ids.push(...batchIds);
    const recipients = batchIds.map((_, i) => `+1555${String(s * PER_SEND + i).padStart(7, '0')}`);
    await storeSend(
      sql,
      {
        ids: batchIds,
        recipients,
        userId: user.id,
        requestedDeviceId: null,
        createdAt: new Date(),
        batch: { id: newId(), recipientsCount: PER_SEND },
        texts: { kind: 'same', body: text, segments: info.segments, encoding: info.encoding },
      },
      null,
    );
  }
  let slot = 0;
  for (const chunk of chunks(ids, BATCH)) {
    await assignMessages(sql, { assignments: chunk.map((id) => ({ id, deviceId: devices[slot++ % DEVICES]! })), now: new Date() });
  }
  await Promise.all(
    devices.map(async (deviceId) => {
      for (;;) {
        const claimed = await offerMessages(sql, { deviceId, limit: BATCH, order: 'fresh-first', now: new Date() });
        if (claimed.length === 0) return;
        for (const status of ['sent', 'delivered'] as const) {
          await applyReports(sql, { status, now: new Date(), reports: claimed.map((m) => ({ id: m.id, deviceId, at: new Date(), error: null })) });
        }
      }
    }),
  );
});

const prefix = `smsgw-floor-${randomBytes(4).toString('hex')}`;
const redisSettings = { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_SENTINEL_NAME: 'mymaster', QUEUE_PREFIX: prefix };
const redis = createProducerConnection(redisSettings);
const queue = createDispatchQueue(redis, prefix);
let worker: Worker | undefined;
const workerConnection = createWorkerConnection(redisSettings);
const bullmq = await measure('BullMQ: one job per message, added in bulk, consumed by a no-op worker', async () => {
  for (const chunk of chunks(ids, PER_SEND)) await enqueueDispatch(queue, chunk);
  let done = 0;
  await new Promise<void>((resolve) => {
    worker = new Worker(JOBS['message.dispatch'].queue, async () => void (++done === TOTAL && resolve()), {
      connection: workerConnection,
      prefix,
      concurrency: 256,
    });
  });
});

await worker?.close();
workerConnection.disconnect();
await queue.close();
await deletePrefix(redis, prefix);
redis.disconnect();
await sql.end();
await db.$disconnect();

const cores = availableParallelism();
const cpu = postgres.cpu + bullmq.cpu;
console.log(`smsgw pipeline floor: ${TOTAL} messages, ${DEVICES} devices, ${cores} cores`);
for (const part of [postgres, bullmq]) {
  console.log(`${part.name}\n  ${part.seconds.toFixed(2)} s alone, CPU ${part.cpu.toFixed(1)} s (${part.detail})`);
}
console.log(
  `together at least ${cpu.toFixed(1)} CPU seconds: at most ${Math.round(TOTAL / (cpu / cores))} messages/s on ${cores} cores, before HTTP, devices and dispatch logic`,
);
