// ./pnpmw test: the whole suite as two vitest runs side by side (docs/development.md, "Tests"):
// the projects `isolated` then `processes` in one, the fault suite (`faults`, on a Postgres cluster
// and Redis servers of its own) then the topology suite (`topologies`: other hosts, poolers, Redis
// Cluster and Sentinel) in the other. Vitest runs the projects of one run one after the other; the
// fault and topology suites mostly wait on restarts, failovers and timeouts, so beside the rest they
// cost little wall time. Their report is printed when both have ended; the exit code is the first
// failure's.
// With arguments (`./pnpmw test <files or flags>`) it is one plain `vitest run` of them.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const args = process.argv.slice(2);

function run(vitestArgs, { capture }) {
  const child = spawn(process.execPath, [vitest, 'run', ...vitestArgs], { stdio: ['ignore', capture ? 'pipe' : 'inherit', capture ? 'pipe' : 'inherit'] });
  const chunks = [];
  if (capture) {
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
  }
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  return { child, done, output: () => Buffer.concat(chunks).toString() };
}

const runs =
  args.length > 0
    ? [run(args, { capture: false })]
    : [
        run(['--project', 'isolated', '--project', 'processes'], { capture: false }),
        run(['--project', 'faults', '--project', 'topologies'], { capture: true }),
      ];

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const { child } of runs) child.kill(signal);
  });
}

const codes = await Promise.all(runs.map((r) => r.done));
const faults = runs[1];
if (faults) {
  process.stdout.write('\n──── the fault and topology suites (projects faults, topologies), run beside the rest ────\n');
  process.stdout.write(faults.output());
}
process.exit(codes.find((code) => code !== 0) ?? 0);
