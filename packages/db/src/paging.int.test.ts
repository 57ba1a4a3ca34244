import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from './client.ts';
import { createListingSql, type ListingSql } from './sql.ts';
import { listMessages } from './messages.ts';
import { listReceived } from './received.ts';
import { TOTAL_CAP, type ListCursor } from './paging.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

/** Listing (issue 15, item 1): keyset pages visit every row once, filters and a capped total. */
let database: TestDatabase;
let db: Db;
let listing: ListingSql & { end(): Promise<void> };
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  db = createDb({ url: database.url, poolSize: 2 });
  listing = createListingSql({ url: database.url, poolSize: 2 });
});
afterAll(async () => {
  await Promise.all([db?.$disconnect(), listing?.end()]);
  await database?.drop();
});

async function user(): Promise<string> {
  const id = randomUUID();
  await db.$executeRaw`INSERT INTO users (id, name) VALUES (${id}::uuid, ${`pager-${id}`})`;
  return id;
}

async function device(userId: string): Promise<string> {
  const id = randomUUID();
  await db.$executeRaw`INSERT INTO devices (id, user_id, name, token_hash) VALUES (${id}::uuid, ${userId}::uuid, 'phone', decode(md5(${id}), 'hex'))`;
  return id;
}

/**
 * `count` messages in sends of 50 that share their created_at (as one send's recipients do), the
 * n-th with state states[n % states.length] and the given device columns.
 */
async function messages(
  userId: string,
  count: number,
  options: { states?: string[]; deviceId?: string | null; requestedDeviceId?: string | null; to?: string } = {},
) {
  const states = options.states ?? ['delivered'];
  await db.$executeRaw`
    INSERT INTO messages (id, user_id, to_number, body, segments, encoding, state, device_id, requested_device_id, created_at, updated_at)
    SELECT gen_random_uuid(), ${userId}::uuid, coalesce(${options.to ?? null}::text, '+1555' || lpad(n::text, 7, '0')), 'page', 1, 'GSM-7',
           (${states}::text[])[1 + n % ${states.length}]::message_state, ${options.deviceId ?? null}::uuid, ${options.requestedDeviceId ?? null}::uuid,
           timestamptz '2026-01-01' + (n / 50) * interval '1 second', now()
      FROM generate_series(0, ${count - 1}) n`;
}

async function walk(list: (cursor?: ListCursor) => Promise<{ rows: { id: string; createdAt: Date }[]; nextCursor: ListCursor | null }>) {
  const seen: { id: string; createdAt: Date }[] = [];
  let cursor: ListCursor | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await list(cursor);
    seen.push(...page.rows);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return seen;
}

describe('listing by cursor', () => {
  it('walks 5,000 messages, 50 to a timestamp, visiting each exactly once, newest first', async () => {
    const userId = await user();
    await messages(userId, 5000);
    const seen = await walk((cursor) => listMessages(listing, { userId, limit: 97, cursor }));
    expect(seen).toHaveLength(5000);
    expect(new Set(seen.map((m) => m.id)).size).toBe(5000);
    const order = seen.map((m) => [m.createdAt.getTime(), m.id] as const);
    expect(order.every(([t, id], i) => i === 0 || t < order[i - 1]![0] || (t === order[i - 1]![0] && id < order[i - 1]![1]))).toBe(true);
    // The same as offset paging over the same rows.
    const byOffset = await listMessages(listing, { userId, limit: 97, offset: 970 });
    expect(byOffset.rows.map((m) => m.id)).toEqual(seen.slice(970, 1067).map((m) => m.id));
  });

  it('walks a filter over several states, and a device: its assigned messages and those named for it and not yet assigned', async () => {
    const userId = await user();
    const phone = await device(userId);
    const other = await device(userId);
    await messages(userId, 600, { states: ['pending', 'assigned', 'sent', 'delivered', 'failed'], deviceId: phone });
    await messages(userId, 300, { states: ['pending'], deviceId: null, requestedDeviceId: phone });
    await messages(userId, 300, { states: ['delivered'], deviceId: other, requestedDeviceId: phone }); // moved: shows the other device
    await messages(userId, 200, { states: ['delivered'], deviceId: other });

    const mine = await walk((cursor) => listMessages(listing, { userId, deviceId: phone, limit: 64, cursor }));
    expect(mine).toHaveLength(900);
    expect(new Set(mine.map((m) => m.id)).size).toBe(900);
    const two = await walk((cursor) => listMessages(listing, { userId, states: ['pending', 'failed'], deviceId: phone, limit: 33, cursor }));
    expect(two).toHaveLength(120 + 120 + 300);
    const page = await listMessages(listing, { userId, states: ['pending', 'failed'], deviceId: phone, limit: 10 });
    expect({ total: page.total, exact: page.totalExact }).toEqual({ total: 540, exact: true });
  });

  it('counts exactly up to the cap, and says so above it', async () => {
    const userId = await user();
    await messages(userId, TOTAL_CAP, { to: '+15550001111' });
    const at = await listMessages(listing, { userId, to: '+15550001111', limit: 5 });
    expect({ total: at.total, exact: at.totalExact, rows: at.rows.length }).toEqual({ total: TOTAL_CAP, exact: true, rows: 5 });
    await messages(userId, 1, { to: '+15550001111' });
    const above = await listMessages(listing, { userId, to: '+15550001111', limit: 5 });
    expect({ total: above.total, exact: above.totalExact }).toEqual({ total: TOTAL_CAP, exact: false });
    expect((await listMessages(listing, { userId, to: '+15559999999', limit: 5 })).total).toBe(0);
  });

  it('pages incoming SMS the same way', async () => {
    const userId = await user();
    const phone = await device(userId);
    await db.$executeRaw`
      INSERT INTO received_messages (id, user_id, device_id, from_number, body, received_at, created_at)
      SELECT gen_random_uuid(), ${userId}::uuid, ${phone}::uuid, '+1666' || (n % 3), 'in', now(), timestamptz '2026-01-01' + (n / 20) * interval '1 second'
        FROM generate_series(0, 1199) n`;
    const all = await walk((cursor) => listReceived(listing, { userId, limit: 50, cursor }));
    expect(new Set(all.map((r) => r.id)).size).toBe(1200);
    const fromOne = await walk((cursor) => listReceived(listing, { userId, from: '+16660', limit: 50, cursor }));
    expect(fromOne).toHaveLength(400);
  });
});
