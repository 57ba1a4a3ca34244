import { randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR, migrate, quoteIdent } from './migrator.ts';
import { serverUrl } from './testing/test-database.ts';
import { createDb } from './client.ts';
import { createUser, findUserByIdOrName, findUserByName, UserNameTakenError } from './users.ts';

const MIGRATION = '20261124070000_unique_user_names_disabled_users';

// A database migrated up to the migration before unique user names, with users that share names.
const name = `smsgw_test_names_${randomBytes(6).toString('hex')}`;
let url: string;
let admin: pg.Client;
let before: string;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: serverUrl(inject('databaseUrl'), 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  url = serverUrl(inject('databaseUrl'), name);
  before = await mkdtemp(join(tmpdir(), 'smsgw-migrations-'));
  const earlier = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((e) => e.isDirectory() && e.name < MIGRATION);
  for (const entry of earlier) await cp(join(MIGRATIONS_DIR, entry.name), join(before, entry.name), { recursive: true });
  await migrate(url, before);
});
afterAll(async () => {
  await admin?.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  await admin?.end();
  if (before) await rm(before, { recursive: true, force: true });
});

describe('unique user names', () => {
  it('the migration renames later users that share a name, oldest first, past names already taken', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const users: [string, string][] = [
      ['a', '2020-01-02'],
      ['a', '2020-01-01'],
      ['a', '2020-01-03'],
      ['a (2)', '2019-01-01'],
      ['b', '2020-01-01'],
    ];
    const ids = users.map(() => randomUUID());
    for (const [i, [userName, createdAt]] of users.entries()) {
      await client.query('INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)', [ids[i], userName, createdAt]);
    }
    await client.end();

    expect(await migrate(url)).toContain(MIGRATION);
    const db = createDb({ url, poolSize: 1 });
    try {
      const rows = await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
      const named = Object.fromEntries(rows.map((row) => [row.id, row.name]));
      expect(ids.map((id) => named[id])).toEqual(['a (3)', 'a', 'a (4)', 'a (2)', 'b']);

      await expect(createUser(db, { name: 'b' })).rejects.toThrow(UserNameTakenError);
      expect((await findUserByName(db, 'a'))?.id).toBe(ids[1]);
      expect((await findUserByIdOrName(db, ids[3]!))?.name).toBe('a (2)');
      expect((await findUserByIdOrName(db, 'a (4)'))?.id).toBe(ids[2]);
      expect(await findUserByIdOrName(db, randomUUID())).toBeNull();
    } finally {
      await db.$disconnect();
    }
  });
});
