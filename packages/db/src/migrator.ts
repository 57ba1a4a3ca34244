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

/** Creates the database of `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
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

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Why a process cannot start on this database, in one line that names the variable and the fix; or
 * null when the database is there and has every migration.
 */
export async function databaseProblem(url: string, dir = MIGRATIONS_DIR): Promise<string | null> {
  const where = (() => {
    try {
      const parsed = new URL(url);
      return `${parsed.hostname}:${parsed.port || 5432}/${parsed.pathname.slice(1)}`;
    } catch {
      return 'DATABASE_URL';
    }
  })();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') return `Database ${where} does not exist (DATABASE_URL): create and migrate it with ./pnpmw db:migrate.`;
    if (code === '28P01' || code === '28000') return `Postgres refused the credentials of DATABASE_URL (${where}): check the user and password.`;
    return `Cannot reach Postgres at ${where} (DATABASE_URL): ${(error as Error).message || code}. Is it running?`;
  }
  try {
    const { rows } = await client.query<{ name: string | null }>(`SELECT to_regclass('"_prisma_migrations"')::text AS name`);
    const finished = rows[0]?.name
      ? new Set(
          (
            await client.query<{ migration_name: string }>(
              'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
            )
          ).rows.map((r) => r.migration_name),
        )
      : new Set<string>();
    const pending = (await readMigrations(dir)).filter((m) => !finished.has(m.name));
    if (pending.length === 0) return null;
    return `Database ${where} lacks ${pending.length} migration(s), the newest ${pending.at(-1)!.name}: run ./pnpmw db:migrate.`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
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
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const applied = new Map(rows.map((row) => [row.migration_name, row]));
    const done: string[] = [];
    for (const migration of migrations) {
      const previous = applied.get(migration.name);
      if (previous?.finished_at) {
        if (previous.checksum !== migration.checksum) {
          throw new Error(`Migration ${migration.name} was changed after it was applied (checksum differs).`);
        }
        continue;
      }
      if (previous) throw new Error(`Migration ${migration.name} failed earlier and needs manual repair.`);
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      done.push(migration.name);
    }
    return done;
  } finally {
    await client.end();
  }
}
