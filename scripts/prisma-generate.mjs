// Runs `prisma generate` without the native schema engine, which cannot be downloaded everywhere.
// `generate` never calls the schema engine; the CLI only needs PRISMA_SCHEMA_ENGINE_BINARY to name a
// file that exists, so that it skips the download.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const prismaCli = createRequire(import.meta.url).resolve('prisma/build/index.js');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
const result = spawnSync(process.execPath, [prismaCli, 'generate'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
