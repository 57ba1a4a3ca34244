import { defineConfig } from 'vitest/config';

/**
 * The whole suite, four projects. `./pnpmw test` (scripts/test.mjs) runs `isolated` then
 * `processes` in one vitest run and `faults` then `topologies` beside them in another (vitest runs
 * the projects of one run one after the other).
 * - `isolated`: files that only talk to Postgres and Redis, each with its own database and queue
 *   prefix, two at a time. They share each worker's module cache (`isolate: false`): importing the
 *   app once per worker rather than once per file is what makes the group fast (about 5 times less
 *   CPU), and no file relies on a fresh module state (each builds its own app, pools and clients).
 * - `processes`: the files that start real processes (API, dispatchers, simulators, the modem
 *   agent, Chromium), two at a time: each leaves a core to the other's processes, and their
 *   timings hold with the machine that busy (they are checked under far heavier load).
 * - `faults` (`./pnpmw test:faults` alone): restart, stall and wipe a private Postgres cluster and
 *   private Redis servers of their own, one at a time.
 * - `topologies` (`./pnpmw test:topologies` alone): the real processes as deployments past one
 *   machine run them (other hosts behind delaying links, Postgres behind a PgBouncer in transaction
 *   mode, a Redis Cluster and Redis behind Sentinel with primaries killed under load), one file at
 *   a time; they start processes too, so they are kept out of `isolated`.
 */
const PROCESS_TESTS = [
  'test/e2e/**/*.test.ts',
  'test/console/**/*.test.ts',
  'apps/modem-agent/src/**/*.int.test.ts',
  'apps/cli/src/cli.int.test.ts',
  'apps/api/src/plugins/limits-without-redis.int.test.ts',
  'test/deploy/monitoring.int.test.ts',
];

/**
 * The tests' Redis: logical database 15 of the local server unless REDIS_URL names one. Each test
 * removes the keys of its own queue prefix when it ends, by a SCAN of its database: on a database of
 * their own that costs what the tests themselves left there, not what benchmarks or a running demo
 * keep in database 0 (a million keys there made the isolated project 40 % slower). The test
 * processes, the API and dispatchers they start, inherit it.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/15';

const shared = {
  testTimeout: 30_000,
  env: { REDIS_URL },
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'isolated',
          globalSetup: ['./test/global-setup.ts'],
          include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/faults/**', 'test/topologies/**', '**/node_modules/**', ...PROCESS_TESTS],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'processes',
          globalSetup: ['./test/global-setup.ts'],
          include: PROCESS_TESTS,
          maxWorkers: 2,
          // Real processes and a browser, two files at once: a page's answer may take more than the default second.
          expect: { poll: { timeout: 5_000 } },
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'topologies',
          include: ['test/topologies/**/*.test.ts'],
          globalSetup: ['./test/topologies/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          globalSetup: ['./test/faults/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
