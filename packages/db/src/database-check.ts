import pg from 'pg';
import { MIGRATIONS_DIR, readMigrations } from './migrator.ts';

/** The variables that name Postgres (packages/config: DatabaseEnv, DirectDatabaseEnv). */
export interface DatabaseUrls {
  DATABASE_URL: string;
  /** A connection straight to Postgres, for what needs a session of its own; unset: DATABASE_URL. */
  DATABASE_DIRECT_URL?: string;
}

export interface DatabaseCheckOptions {
  /** The variable that holds the URL, named in the line. */
  variable?: keyof DatabaseUrls;
  /**
   * Who holds sessions of their own on this URL and what for (e.g. "the API (LISTEN …)"): reaching
   * Postgres through a connection pooler is then a problem too.
   */
  sessionsFor?: string;
  dir?: string;
}

const TRANSACTION_POOLER_DOC = 'docs/operations.md, "Postgres behind a transaction pooler"';

/**
 * Why a process cannot start on this database, in one line that names the variable and the fix; or
 * null when the database is there and has every migration (and, with `sessionsFor`, is Postgres
 * itself rather than a pooler).
 */
export async function databaseProblem(url: string, options: DatabaseCheckOptions = {}): Promise<string | null> {
  const { variable = 'DATABASE_URL', sessionsFor, dir = MIGRATIONS_DIR } = options;
  const where = (() => {
    try {
      const parsed = new URL(url);
      return `${parsed.hostname}:${parsed.port || 5432}/${parsed.pathname.slice(1)}`;
    } catch {
      return variable;
    }
  })();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') return `Database ${where} does not exist (${variable}): create and migrate it with ./pnpmw db:migrate.`;
    if (code === '28P01' || code === '28000') return `Postgres refused the credentials of ${variable} (${where}): check the user and password.`;
    return `Cannot reach Postgres at ${where} (${variable}): ${(error as Error).message || code}. Is it running?`;
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
    if (pending.length > 0) return `Database ${where} lacks ${pending.length} migration(s), the newest ${pending.at(-1)!.name}: run ./pnpmw db:migrate.`;
    if (sessionsFor && (await throughPooler(client))) {
      return (
        `${variable} (${where}) reaches Postgres through a connection pooler, which keeps no session for ${sessionsFor}: ` +
        'set DATABASE_DIRECT_URL to a connection straight to Postgres, ' +
        `or to ${variable} itself if the pooler is in session mode (${TRANSACTION_POOLER_DOC}).`
      );
    }
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The start-up check of a process that holds sessions besides its pooled statements (the API: the
 * LISTEN of the credential cache, the listings' pool): DATABASE_URL, and DATABASE_DIRECT_URL when
 * set; without it DATABASE_URL holds the sessions, so it must be Postgres itself.
 */
export async function sessionsDatabaseProblem(urls: DatabaseUrls, sessionsFor: string, dir?: string): Promise<string | null> {
  if (!urls.DATABASE_DIRECT_URL) return databaseProblem(urls.DATABASE_URL, { sessionsFor, dir });
  return (await databaseProblem(urls.DATABASE_URL, { dir })) ?? (await databaseProblem(urls.DATABASE_DIRECT_URL, { variable: 'DATABASE_DIRECT_URL', dir }));
}

/**
 * Whether `client` reached Postgres through a connection pooler. As a client connects, Postgres
 * gives it the process id of the backend that serves it (BackendKeyData, which cancel requests
 * quote), and pg_backend_pid() answers the same. A pooler answers the connection itself with a key
 * of its own making (PgBouncer's is random) and runs the statements on a server connection of its
 * pool, another backend: the two differ. A TCP proxy (HAProxy) passes Postgres's own and rightly
 * counts as direct. The pooling mode cannot be told: PgBouncer in session mode counts as a pooler.
 */
export async function throughPooler(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return (client as unknown as { processID: number | null }).processID !== rows[0]!.pid;
}
