import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * Applies the committed Prisma migrations (prisma/migrations/<name>/migration.sql) without the
 * Prisma CLI: in name order, each in its own transaction, under Prisma's own advisory lock, recorded
 * in `_prisma_migrations` with the same checksum, so that `prisma migrate deploy` sees one history.
 */
export const MIGRATIONS_DIR = findMigrationsDir(dirname(fileURLToPath(import.meta.url)));

/** `prisma/migrations` of the checkout, found upwards from here: from the sources and from a bundle in dist/ alike. */
function findMigrationsDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return join(from, '../../../prisma/migrations');
  }
}

// The lock key `prisma migrate` takes, so that both never run at once on one database.
const PRISMA_ADVISORY_LOCK = 72707369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Creates the database of `url` when it does not exist yet, through the `postgres` database of the
 * same server. A server that serves no `postgres` (a pooler that lists only smsgw's database) is
 * fine while the database exists. (Reaching the database first would not do: behind PgBouncer a
 * failed login to it holds the next one back for server_login_retry, 15 s.)
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  try {
    await client.connect();
  } catch (error) {
    if (await reachable(url)) return false;
    throw error;
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '42P04') return false; // created meanwhile
    throw error;
  } finally {
    await client.end();
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Applies pending migrations; returns the names applied. Prisma's lock is taken for each
 * transaction (`pg_advisory_xact_lock`), never for the session: behind a transaction pooler
 * (PgBouncer) the session is the pooler's server connection, which outlives this client and would
 * keep a session lock held, and the next migration to get another server connection would wait for
 * it for ever. Under the lock each step reads again what is applied, so that migrators running at
 * once (or `prisma migrate deploy`, which takes the same key) apply each migration once, in order.
 */
export async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const applied = await locked(client, async () => {
      await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
      return appliedMigrations(client);
    });
    const done: string[] = [];
    for (const migration of migrations) {
      if (isApplied(migration, applied.get(migration.name))) continue;
      const ran = await locked(client, async () => {
        // Another migrator may have applied it since the read above.
        if (isApplied(migration, (await appliedMigrations(client, migration.name)).get(migration.name))) return false;
        try {
          await client.query(migration.sql);
        } catch (error) {
          throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
        }
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        return true;
      });
      if (ran) done.push(migration.name);
    }
    return done;
  } finally {
    await client.end();
  }
}

interface AppliedMigration {
  checksum: string;
  finished_at: Date | null;
}

async function appliedMigrations(client: pg.Client, name?: string): Promise<Map<string, AppliedMigration>> {
  const { rows } = await client.query<AppliedMigration & { migration_name: string }>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL AND ($1::text IS NULL OR migration_name = $1)`,
    [name ?? null],
  );
  return new Map(rows.map((row) => [row.migration_name, row]));
}

/** Whether `migration` is applied (false: it is to be applied); throws when its record forbids either. */
function isApplied(migration: Migration, previous: AppliedMigration | undefined): boolean {
  if (!previous) return false;
  if (!previous.finished_at) throw new Error(`Migration ${migration.name} failed earlier and needs manual repair.`);
  if (previous.checksum !== migration.checksum) throw new Error(`Migration ${migration.name} was changed after it was applied (checksum differs).`);
  return true;
}

/** `work` in a transaction of its own that holds Prisma's lock until it ends. */
async function locked<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [PRISMA_ADVISORY_LOCK]);
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
