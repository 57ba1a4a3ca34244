import type { TestProject } from 'vitest/node';
import { prepareTemplateDatabase } from '@smsgw/db/testing';
import { buildProcesses } from './support/cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Postgres server URL the test databases are created on. */
    databaseUrl: string;
    /** The migrated template database that each test file clones. */
    templateDatabase: string;
  }
}

const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export default async function setup(project: TestProject): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? DEFAULT_URL;
  project.provide('databaseUrl', databaseUrl);
  project.provide('templateDatabase', await prepareTemplateDatabase(databaseUrl));
  // The end-to-end tests run the bundled processes of the code under test.
  buildProcesses();
}
