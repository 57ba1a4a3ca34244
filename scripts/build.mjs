// Bundles the long-running processes into plain JavaScript (dist/<name>.mjs), so that they start
// in a fraction of a second and carry no TypeScript loader (tsx adds ~40 MB and seconds of CPU
// per process). Workspace packages are bundled; every npm package stays an import, of the file
// that the importing workspace package resolves to (pnpm keeps each package's dependencies with
// it, so a bare name would not resolve from dist/). Build where the bundle runs.
import { build } from 'esbuild';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENTRIES = {
  api: 'apps/api/src/server.ts',
  dispatcher: 'apps/dispatcher/src/main.ts',
  'device-sim': 'apps/device-sim/src/main.ts',
  'modem-agent': 'apps/modem-agent/src/main.ts',
  cli: 'apps/cli/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
};

const root = fileURLToPath(new URL('..', import.meta.url));
const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : Object.keys(ENTRIES);
for (const name of names) {
  if (!ENTRIES[name]) {
    console.error(`unknown entry ${name}; known: ${Object.keys(ENTRIES).join(', ')}`);
    process.exit(2);
  }
}

const externalNpm = {
  name: 'external-npm',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@smsgw/') || args.path.startsWith('node:') || args.pluginData === 'resolving') return undefined;
      const resolved = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: 'resolving' });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      // Node's own modules resolve to themselves.
      return { path: resolved.path.startsWith('/') ? resolved.path : args.path, external: true };
    });
  },
};

// The Redis scripts (packages/queue/src/commands/*.lua) go into the bundles as text: a bundle
// has no .lua beside it (packages/queue's luaScript reads SMSGW_LUA_SCRIPTS first).
const commands = join(root, 'packages/queue/src/commands');
const lua = {};
for (const file of (await readdir(commands)).filter((f) => f.endsWith('.lua'))) {
  lua[file.slice(0, -'.lua'.length)] = await readFile(join(commands, file), 'utf8');
}

const result = await build({
  absWorkingDir: root,
  write: false,
  entryPoints: Object.fromEntries(names.map((name) => [name, ENTRIES[name]])),
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Stack traces need the mappings only: the sources' text would be parsed and held by every process.
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [externalNpm],
  define: { SMSGW_LUA_SCRIPTS: JSON.stringify(lua) },
});
// Each file is written aside and renamed into place: a process starting a bundle while another
// build runs (tests build and start in parallel) reads the old file or the new one, never half of one.
await mkdir(join(root, 'dist'), { recursive: true });
for (const file of result.outputFiles) {
  const aside = `${file.path}.${process.pid}.tmp`;
  await writeFile(aside, file.contents);
  await rename(aside, file.path);
}
