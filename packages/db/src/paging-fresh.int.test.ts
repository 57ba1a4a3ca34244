import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from './client.ts';
import { createListingSql, createSql, type ListingSql } from './sql.ts';
import { listMessages, type MessageFilter } from './messages.ts';
import { TOTAL_CAP, listingsInTransactions } from './paging.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

/**
 * Listing right after a bulk load (issue 27, item 6): before the table was ever analysed, the
 * planner must still walk the index in page order and stop at the page and the capped count,
 * never read all of a user's index entries (as a bitmap of the user's rows would).
 */
const MESSAGES = 60_000;
let database: TestDatabase;
let db: Db;
let listing: ListingSql & { end(): Promise<void> };
let userId: string;
let batchId: string;

beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  db = createDb({ url: database.url, poolSize: 2 });
  listing = createListingSql({ url: database.url, poolSize: 2 });
  // As before autovacuum ran: no statistics, no visibility map, whatever the test's pace.
  await db.$executeRawUnsafe('ALTER TABLE messages SET (autovacuum_enabled = false)');
  userId = randomUUID();
  batchId = randomUUID();
  await db.$executeRaw`INSERT INTO users (id, name) VALUES (${userId}::uuid, ${`fresh-${userId}`})`;
  await db.$executeRaw`INSERT INTO batches (id, user_id, recipients_count, created_at) VALUES (${batchId}::uuid, ${userId}::uuid, 100, now())`;
  await db.$executeRaw`
    INSERT INTO messages (id, user_id, batch_id, to_number, body, segments, encoding, state, created_at, updated_at)
    SELECT gen_random_uuid(), ${userId}::uuid, CASE WHEN n / 100 = 300 THEN ${batchId}::uuid END, '+1555' || lpad(n::text, 7, '0'), 'fresh', 1, 'GSM-7',
           (CASE WHEN n % 10 = 0 THEN 'pending' ELSE 'delivered' END)::message_state, timestamptz '2026-01-01' + n * interval '10 milliseconds', now()
      FROM generate_series(0, ${MESSAGES - 1}) n`;
}, 60_000);
afterAll(async () => {
  await Promise.all([db?.$disconnect(), listing?.end()]);
  await database?.drop();
});

/** Index entries read on messages so far, as Postgres' cumulative statistics have them. */
async function indexEntriesRead(): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT coalesce(sum(idx_tup_read), 0)::int AS n FROM pg_stat_user_indexes WHERE relname = 'messages'`;
  return row!.n;
}

/**
 * Index entries read so far, once the statistics of the connections that read them arrived: a
 * connection sends them within a second of going idle, so two equal readings 1.5 s apart.
 */
async function settledEntriesRead(): Promise<number> {
  let last = await indexEntriesRead();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const now = await indexEntriesRead();
    if (now === last) return now;
    last = now;
  }
}

/** The listings' own pool (the API's), or a plain one with the settings per transaction (the CLI's). */
function listingOn(how: 'session' | 'transactions'): ListingSql & { end(): Promise<void> } {
  if (how === 'session') return createListingSql({ url: database.url, poolSize: 1 });
  const pool = createSql({ url: database.url, poolSize: 1 });
  return Object.assign(listingsInTransactions(pool), { end: () => pool.end() });
}

async function entriesReadBy(
  filter: Omit<MessageFilter, 'userId' | 'limit'>,
  how: 'session' | 'transactions' = 'session',
): Promise<{ read: number; total: number; rows: number }> {
  const before = await settledEntriesRead();
  // A connection of its own, closed after the listing: a backend that exits sends its statistics
  // at once, where an idle one may hold them for up to 10 s (a late report of an earlier listing).
  const own = listingOn(how);
  const page = await listMessages(own, { userId, limit: 20, ...filter }).finally(() => own.end());
  return { read: (await settledEntriesRead()) - before, total: page.total, rows: page.rows.length };
}

describe('listing before the table was ever analysed', () => {
  it('reads at most the cap and a page of index entries with no filter, 60,000 messages', async () => {
    const { read, total, rows } = await entriesReadBy({});
    expect({ total, rows }).toEqual({ total: TOTAL_CAP, rows: 20 });
    expect(read).toBeLessThanOrEqual(TOTAL_CAP + 1 + 21);
  });

  it('reads at most the cap and a page of index entries for status=queued, 6,000 of them spread over the history', async () => {
    const { read, total, rows } = await entriesReadBy({ states: ['pending', 'assigned'] });
    expect({ total, rows }).toEqual({ total: TOTAL_CAP, rows: 20 });
    expect(read).toBeLessThanOrEqual(TOTAL_CAP + 1 + 21 + 2);
  });

  it('reads as little with no filter when the settings are set per transaction, as the CLI lists (on a transaction pooler too)', async () => {
    const { read, total, rows } = await entriesReadBy({}, 'transactions');
    expect({ total, rows }).toEqual({ total: TOTAL_CAP, rows: 20 });
    expect(read).toBeLessThanOrEqual(TOTAL_CAP + 1 + 21);
  });

  it('reads the batch only for batch_id, and still only the caller’s batch', async () => {
    const { read, total, rows } = await entriesReadBy({ batchId });
    expect({ total, rows }).toEqual({ total: 100, rows: 20 });
    expect(read).toBeLessThanOrEqual(100 + 21 + 2);
    expect((await listMessages(listing, { userId: randomUUID(), batchId, limit: 20 })).total).toBe(0);
  });
});
