import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { newId } from '@smsgw/core';
import { applyReports, type ReportInput } from './dispatch.ts';
import { createSql, type Sql } from './sql.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

// Two dispatchers apply report batches at the same time; batches of different devices' requests
// name the same messages in any order. Each statement locks its rows in one order (by id), so
// two of them wait for each other instead of deadlocking (40P01).
let database: TestDatabase;
let sql: Sql;
let userId: string;
const devices: string[] = [];
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  sql = createSql({ url: database.url, poolSize: 4 });
  userId = newId();
  await sql.query(`INSERT INTO users (id, name) VALUES ($1, $2)`, [userId, `locks-${userId}`]);
  for (let i = 0; i < 3; i++) {
    const id = newId();
    await sql.query(`INSERT INTO devices (id, user_id, name, token_hash, enabled) VALUES ($1, $2, $3, $4, true)`, [id, userId, `d${i}`, randomBytes(32)]);
    devices.push(id);
  }
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

/** `n` messages offered to the devices in turn, in ascending id order. */
async function offeredMessages(n: number): Promise<{ id: string; deviceId: string }[]> {
  const messages = Array.from({ length: n }, (_, i) => ({ id: newId(), deviceId: devices[i % devices.length]! }));
  await sql.query(
    `INSERT INTO messages (id, user_id, to_number, body, segments, encoding, state, device_id, assigned_at, offered_at)
     SELECT id, $3, '+15550000000', 'x', 1, 'GSM-7', 'assigned', device_id, now(), now() FROM unnest($1::uuid[], $2::uuid[]) AS t(id, device_id)`,
    [messages.map((m) => m.id), messages.map((m) => m.deviceId), userId],
  );
  return messages.sort((a, b) => a.id.localeCompare(b.id));
}

const input = (messages: { id: string; deviceId: string }[], at: Date): ReportInput[] => messages.map((m) => ({ ...m, at, error: null }));

it('applies concurrent report batches over the same messages in opposite orders without a deadlock', async () => {
  for (let round = 0; round < 8; round++) {
    const messages = await offeredMessages(1500);
    const now = new Date();
    const forward = input(messages, now);
    const backward = [...forward].reverse();
    const outcomes = await Promise.allSettled([
      applyReports(sql, { status: 'sent', reports: forward, now }),
      applyReports(sql, { status: 'sent', reports: backward, now }),
      applyReports(sql, { status: 'sending', reports: backward, now }),
      applyReports(sql, { status: 'delivered', reports: forward, now, from: ['sent'] }),
    ]);
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as { code?: string }).code ?? String(o.reason)] : []));
    expect(errors).toEqual([]);
    const moved = outcomes.flatMap((o) => (o.status === 'fulfilled' ? o.value.moved : []));
    // Each message moved to `sent` once, whichever batch won.
    expect(new Set(moved).size).toBeGreaterThanOrEqual(messages.length);
  }
});
