// Builds the web console (apps/console, Vite) into apps/console/dist, which the API serves at
// /console/. Skips the build when dist is newer than every source file. Prints one line.
// `--force` builds anyway. Safe to run several at once (test files do): one builds, the others
// wait for it, and dist is replaced in one step, never seen half-written.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const app = join(root, 'apps/console');
const dist = join(app, 'dist');
const built = join(dist, 'index.html');
const lock = join(app, '.build-lock');
// A lock older than this was left by a build that died.
const STALE_LOCK_MS = 120_000;
// The console's own files and what it bundles from the workspace (the segment count of packages/core).
const sources = [...['src', 'index.html', 'vite.config.ts', 'package.json'].map((p) => join(app, p)), join(root, 'packages/core/src/segments.ts')];

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const upToDate = () => existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources.map(newest));
const force = process.argv.includes('--force');
const say = (line) => console.log(`console: ${line}`);

function takeLock() {
  for (;;) {
    try {
      mkdirSync(lock);
      return;
    } catch {
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

if (!force && upToDate()) {
  say(`up to date (${relative(root, dist)})`);
  process.exit(0);
}

let vite;
try {
  vite = join(dirname(createRequire(join(app, 'package.json')).resolve('vite/package.json')), 'bin/vite.js');
} catch {
  say('not built: vite is not installed (run ./pnpmw install); the API answers 503 at /console/');
  process.exit(0);
}

takeLock();
try {
  if (!force && upToDate()) say(`up to date (${relative(root, dist)}, built meanwhile)`);
  else build();
} finally {
  rmSync(lock, { recursive: true, force: true });
}

function build() {
  const started = Date.now();
  const next = `${dist}.next-${process.pid}`;
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'error', '--outDir', next], { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) {
    rmSync(next, { recursive: true, force: true });
    console.error(`console: build failed (exit ${result.status ?? result.signal})`);
    process.exitCode = 1;
    return;
  }
  const old = `${dist}.old-${process.pid}`;
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(next, dist);
  rmSync(old, { recursive: true, force: true });
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s (${relative(root, dist)})`);
}
