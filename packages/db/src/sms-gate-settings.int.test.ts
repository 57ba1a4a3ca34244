import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createSql, type Sql } from './sql.ts';
import { smsGateSettings, storeSmsGateSettings } from './sms-gate-settings.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

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

async function user(): Promise<string> {
  const id = randomUUID();
  await sql.query('INSERT INTO users (id, name) VALUES ($1, $2)', [id, `settings-${id}`]);
  return id;
}

it('makes the settings with a random signing key on first use, the same key for every later read, one per user', async () => {
  const [a, b] = [await user(), await user()];
  const first = await Promise.all([smsGateSettings(sql, a), smsGateSettings(sql, a), smsGateSettings(sql, a)]);
  const key = first[0].webhooks!.signing_key;
  expect(key).toMatch(/^[0-9a-f]{32}$/);
  expect(first.map((s) => s.webhooks!.signing_key)).toEqual([key, key, key]);
  expect((await smsGateSettings(sql, a)).webhooks!.signing_key).toBe(key);
  expect((await smsGateSettings(sql, b)).webhooks!.signing_key).not.toBe(key);
});

it('gives concurrent first uses of many users each one key, read by all of them (none sees the row missing)', async () => {
  const users = await Promise.all(Array.from({ length: 20 }, () => user()));
  const reads = await Promise.all(
    users.flatMap((id) => Array.from({ length: 4 }, async () => ({ id, key: (await smsGateSettings(sql, id)).webhooks!.signing_key }))),
  );
  for (const id of users) expect(new Set(reads.filter((r) => r.id === id).map((r) => r.key)).size).toBe(1);
});

it('stores what it is given in place of the settings, before or after their first use', async () => {
  const [a, b] = [await user(), await user()];
  await smsGateSettings(sql, a);
  await storeSmsGateSettings(sql, a, { webhooks: { signing_key: 'k1' }, ping: { interval_seconds: 60 } });
  await storeSmsGateSettings(sql, b, { webhooks: { signing_key: 'k2' } });
  expect(await smsGateSettings(sql, a)).toEqual({ webhooks: { signing_key: 'k1' }, ping: { interval_seconds: 60 } });
  expect(await smsGateSettings(sql, b)).toEqual({ webhooks: { signing_key: 'k2' } });
});
