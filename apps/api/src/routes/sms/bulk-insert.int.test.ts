import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, send, startTestApi, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  // In this file's own database: one row per INSERT statement on messages or batches, with the rows
  // that statement inserted for each user (from the statement's transition table).
  await api.db.$executeRawUnsafe(`CREATE TABLE stmt_count (tbl text NOT NULL, user_id uuid NOT NULL, n int NOT NULL)`);
  await api.db.$executeRawUnsafe(`
    CREATE FUNCTION count_insert_statement() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO stmt_count (tbl, user_id, n) SELECT TG_TABLE_NAME, user_id, count(*) FROM new_rows GROUP BY user_id;
      RETURN NULL;
    END $$`);
  for (const table of ['messages', 'batches']) {
    await api.db.$executeRawUnsafe(`
      CREATE TRIGGER ${table}_insert_statements AFTER INSERT ON ${table}
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_insert_statement()`);
  }
});
afterAll(async () => {
  await api?.close();
});

const phoneRun = String(100 + (randomBytes(2).readUInt16BE(0) % 900));
let phoneSeq = 0;
const phones = (n: number) => Array.from({ length: n }, () => `+1${phoneRun}${String(++phoneSeq).padStart(7, '0')}`);

/** The INSERT statements that hit `table` for the user, each as the number of rows it inserted. */
async function insertStatements(table: 'messages' | 'batches', userId: string): Promise<number[]> {
  const rows = await api.db.$queryRaw<{ n: number }[]>`SELECT n FROM stmt_count WHERE tbl = ${table} AND user_id = ${userId}::uuid`;
  return rows.map((r) => r.n);
}

describe('POST /api/sms/send stores messages in bulk', () => {
  it('inserts 1000 messages with exactly one INSERT statement on messages (and one on batches)', async () => {
    const { apiKey, user } = await createTestUser(api.db);

    const res = await send(api.app, apiKey, { recipients: phones(1000), body: 'bulk' });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ recipients_count: 1000, status: 'accepted' });
    expect(await insertStatements('messages', user.id)).toEqual([1000]);
    expect(await insertStatements('batches', user.id)).toEqual([1]);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(1000);
  });

  it('inserts 10000 messages (the default MAX_RECIPIENTS) with one INSERT statement and enqueues a job for each', async () => {
    const { apiKey, user } = await createTestUser(api.db);

    const res = await send(api.app, apiKey, { recipients: phones(10_000), body: 'the most' });

    expect(res.statusCode).toBe(200);
    expect(await insertStatements('messages', user.id)).toEqual([10_000]);
    const ids: string[] = res.json().message_ids;
    const stored = await api.db.message.findMany({ where: { userId: user.id }, select: { id: true } });
    expect(stored.map((m) => m.id).sort()).toEqual([...ids].sort());
    const jobIds = new Set((await api.queue.getJobs(['waiting', 'prioritized', 'delayed'])).map((j) => j.id));
    expect(ids.filter((id) => !jobIds.has(id))).toEqual([]);
  });

  it('inserts a single message with one INSERT statement and no batch', async () => {
    const { apiKey, user } = await createTestUser(api.db);

    const res = await send(api.app, apiKey, { recipients: phones(1), body: 'one' });

    expect(res.statusCode).toBe(200);
    expect(await insertStatements('messages', user.id)).toEqual([1]);
    expect(await insertStatements('batches', user.id)).toEqual([]);
  });

  it('inserts nothing for a refused request', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 5 });

    const res = await send(api.app, apiKey, { recipients: phones(6), body: 'over quota' });

    expect(res.statusCode).toBe(402);
    expect(await insertStatements('messages', user.id)).toEqual([]);
    expect(await insertStatements('batches', user.id)).toEqual([]);
  });
});
