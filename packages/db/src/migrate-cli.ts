import { MigrateConfigSchema, loadConfig } from '@smsgw/config';
import { ensureDatabase, migrate } from './migrator.ts';

// `pnpm db:migrate`: creates the database if missing and applies the migrations, on
// DATABASE_DIRECT_URL when set (past a transaction pooler), else on DATABASE_URL.
const config = loadConfig(MigrateConfigSchema);
const url = config.DATABASE_DIRECT_URL ?? config.DATABASE_URL;
const created = await ensureDatabase(url);
const applied = await migrate(url);
console.log(JSON.stringify({ database_created: created, applied }));
