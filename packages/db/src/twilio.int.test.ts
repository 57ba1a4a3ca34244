import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createSql, type Sql } from './sql.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';
import { twilioAccount } from './twilio.ts';

let database: TestDatabase;
let sql: Sql;
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  sql = createSql({ url: database.url, poolSize: 4 });
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

it('makes one account per user on first use, which concurrent first uses all read', async () => {
  const users = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const id = randomUUID();
      await sql.query('INSERT INTO users (id, name) VALUES ($1, $2)', [id, `twilio-${id}`]);
      return id;
    }),
  );
  const reads = await Promise.all(users.flatMap((id) => Array.from({ length: 4 }, async () => ({ id, account: await twilioAccount(sql, id) }))));
  for (const id of users) {
    const tokens = new Set(reads.filter((r) => r.id === id).map((r) => `${r.account.messagingServiceSid} ${r.account.authToken}`));
    expect(tokens.size).toBe(1);
  }
  expect(new Set(reads.map((r) => r.account.authToken)).size).toBe(users.length);
});
