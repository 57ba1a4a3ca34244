import { defineConfig } from 'vitest/config';

/**
 * The fault suite (`./pnpmw test:faults`): real processes against a private Postgres cluster and
 * private Redis servers, which the tests restart, stall and wipe. One file at a time, so that a
 * restart of the shared private cluster hits only the test that asked for it.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['./test/faults/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
