import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSql, type Sql } from './sql.ts';
import { inTransaction } from './sql.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

/** A transaction's connection dying under it (Postgres restarting) fails the work, not the process. */
let database: TestDatabase;
let sql: Sql;
let admin: Sql;
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  sql = createSql({ url: database.url, poolSize: 2 });
  admin = createSql({ url: database.url, poolSize: 1 });
});
afterAll(async () => {
  await Promise.all([sql?.end(), admin?.end()]);
  await database?.drop();
});

describe('inTransaction', () => {
  it('rejects when its connection is terminated mid-transaction, discards it, and the pool goes on', async () => {
    const work = inTransaction(sql, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // The socket error arrives while the client is checked out, between statements or during one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await client.query('SELECT 1');
    });
    await expect(work).rejects.toThrow();
    expect((await sql.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('commits what the work did when it returns, and rolls it back when it throws', async () => {
    await sql.query('CREATE TABLE IF NOT EXISTS tx_probe (v int)');
    await inTransaction(sql, (client) => client.query('INSERT INTO tx_probe VALUES (1)'));
    await expect(
      inTransaction(sql, async (client) => {
        await client.query('INSERT INTO tx_probe VALUES (2)');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await sql.query('SELECT v FROM tx_probe ORDER BY v')).rows).toEqual([{ v: 1 }]);
  });
});
