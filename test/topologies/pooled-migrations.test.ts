import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { quoteIdent, readMigrations } from '@smsgw/db';
import { runBundle } from '../support/cluster.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';

/**
 * Migrations with DATABASE_URL on a PgBouncer in transaction mode (issue 28, item 1): the bundled
 * migrator (`dist/migrate.mjs`, what `./pnpmw db:migrate` and the compose `migrate` service run)
 * twice, through the pooler alone and with DATABASE_DIRECT_URL. A migrator that kept Prisma's
 * advisory lock for its session left it held on PgBouncer's server connection after it ended, and
 * the next migration that got another server connection waited for it for ever.
 */
const server = inject('databaseUrl');
const PRISMA_LOCK = 72707369;
let bouncer: PgBouncer;
const databases: string[] = [];

beforeAll(async () => {
  bouncer = await startPgBouncer(server);
});
afterAll(async () => {
  await bouncer?.stop();
  await withDirect('postgres', async (client) => {
    for (const name of databases) await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  });
});

const direct = (database: string) => Object.assign(new URL(server), { pathname: `/${database}` }).toString();

async function withDirect<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: direct(database) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database name of this test's own, dropped afterwards; the migrator creates it. */
function newDatabase(): string {
  const name = `smsgw_pooled_${randomBytes(4).toString('hex')}`;
  databases.push(name);
  return name;
}

/** `node dist/migrate.mjs` with `env`: its JSON line, or a failure naming what it printed; killed if it hangs. */
async function migrate(env: Record<string, string>): Promise<{ database_created: boolean; applied: string[] }> {
  const { code, output } = await runBundle('migrate', [], { ...process.env, ...env });
  if (code !== 0) throw new Error(`the migrator ${code === null ? 'hung (killed after 20 s)' : `exited with ${code}`}: ${output}`);
  return JSON.parse(output.trim().split('\n').at(-1)!);
}

/** Session advisory locks on Prisma's key held in `database` (by a connection of PgBouncer's, say). */
const heldLocks = (database: string) =>
  withDirect(database, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = 0 AND objid = $1 AND objsubid = 1`,
      [PRISMA_LOCK],
    );
    return rows[0]!.n;
  });

describe('migrations behind a transaction pooler', () => {
  it('run twice through the pooler alone, the second while another client holds a transaction there, and leave no lock held', async () => {
    const database = newDatabase();
    const pooled = bouncer.pooled(direct(database));
    const all = (await readMigrations()).map((m) => m.name);

    expect(await migrate({ DATABASE_URL: pooled })).toEqual({ database_created: true, applied: all });
    expect(await heldLocks(database)).toBe(0);

    // A transaction in progress holds the server connection the first run used: the second gets another.
    const busy = new pg.Client({ connectionString: pooled });
    await busy.connect();
    try {
      await busy.query('BEGIN');
      await busy.query('SELECT 1');
      expect(await migrate({ DATABASE_URL: pooled })).toEqual({ database_created: false, applied: [] });
    } finally {
      await busy.query('ROLLBACK');
      await busy.end();
    }
    expect(await heldLocks(database)).toBe(0);
  });

  it('run twice on DATABASE_DIRECT_URL when it is set, past the pooler', async () => {
    const database = newDatabase();
    const env = { DATABASE_URL: bouncer.pooled(direct(database)), DATABASE_DIRECT_URL: direct(database) };

    expect((await migrate(env)).applied).toEqual((await readMigrations()).map((m) => m.name));
    expect(await migrate(env)).toEqual({ database_created: false, applied: [] });
    expect(await bouncer.transactions(database)).toBe(0);
  });
});
