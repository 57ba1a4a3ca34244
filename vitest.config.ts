import { defineConfig } from 'vitest/config';

/**
 * The main suite (`./pnpmw test`, then the fault suite of vitest.faults.config.ts). Files that only
 * talk to Postgres and Redis run two at a time (each has its own database and queue prefix); then
 * the files that start real processes (API, dispatchers, simulators, the modem agent, Chromium) run
 * one at a time, alone, because they time what those processes do.
 */
const PROCESS_TESTS = [
  'test/e2e/**/*.test.ts',
  'test/console/**/*.test.ts',
  'apps/modem-agent/src/**/*.int.test.ts',
  'apps/cli/src/cli.int.test.ts',
  'apps/api/src/plugins/limits-without-redis.int.test.ts',
];

const shared = {
  globalSetup: ['./test/global-setup.ts'],
  testTimeout: 30_000,
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
          include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          // The fault suite has a configuration of its own (vitest.faults.config.ts).
          exclude: ['test/faults/**', '**/node_modules/**', ...PROCESS_TESTS],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'processes',
          include: PROCESS_TESTS,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
