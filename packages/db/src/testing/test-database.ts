import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, quoteIdent, readMigrations } from '../migrator.ts';

/**
 * Test databases: the migrations are applied once to a template database named after their
 * checksums, and every test file clones it (`CREATE DATABASE … TEMPLATE …`), which takes
 * milliseconds, so that test files run in parallel on databases of their own.
 */
export function serverUrl(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(baseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl(baseUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates (once per set of migrations) the migrated template database; returns its name. */
export async function prepareTemplateDatabase(baseUrl: string): Promise<string> {
  const migrations = await readMigrations();
  // Names too: a renamed migration would otherwise reuse a template that recorded the old name (the API refuses to start on it).
  const digest = createHash('sha256')
    .update(migrations.map((m) => `${m.name}:${m.checksum}`).join())
    .digest('hex');
  const name = `smsgw_template_${digest.slice(0, 12)}`;
  await withAdmin(baseUrl, async (admin) => {
    // One setup at a time per server, so that concurrent test runs do not build the template twice.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return;
    const building = `${name}_building`;
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(building)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoteIdent(building)}`);
    await migrate(serverUrl(baseUrl, building));
    await admin.query(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(name)}`);
  });
  return name;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own, cloned from the template. */
export async function createTestDatabase(baseUrl: string, template: string): Promise<TestDatabase> {
  const name = `smsgw_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(baseUrl, (admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`));
  return {
    url: serverUrl(baseUrl, name),
    drop: () => withAdmin(baseUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Drops and recreates a named database on the server of `baseUrl`, migrated; for benchmarks. */
export async function recreateDatabase(baseUrl: string, name: string): Promise<string> {
  await withAdmin(baseUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  });
  const url = serverUrl(baseUrl, name);
  await migrate(url);
  return url;
}
