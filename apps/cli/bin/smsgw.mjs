#!/usr/bin/env node
// `smsgw …` as a package bin: pnpm runs a bin (`./pnpmw smsgw …` when the root has no script of that
// name) without the `> smsgw@ smsgw …` banner it prints on stdout before a script, so that stdout
// carries only the command's JSON. Bundles the CLI first, as the root's scripts do, with the build's
// output on stderr, then runs it with these arguments and passes on its exit code.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const build = spawnSync(process.execPath, ['scripts/build.mjs', 'cli'], { cwd: root, stdio: ['ignore', 2, 2] });
if (build.status !== 0) process.exit(build.status ?? 1);
const cli = spawnSync(process.execPath, ['--enable-source-maps', `${root}dist/cli.mjs`, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(cli.status ?? 1);
