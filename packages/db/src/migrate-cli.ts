import { DatabaseEnv, loadConfig } from '@smsgw/config';
import { ensureDatabase, migrate } from './migrator.ts';

// `pnpm db:migrate`: creates the database of DATABASE_URL if missing and applies the migrations.
const { DATABASE_URL } = loadConfig(DatabaseEnv);
const created = await ensureDatabase(DATABASE_URL);
const applied = await migrate(DATABASE_URL);
console.log(JSON.stringify({ database_created: created, applied }));
