import type { TestProject } from 'vitest/node';
import { prepareTemplateDatabase } from '@smsgw/db/testing';
import { buildProcesses } from '../support/cluster.ts';
import { createPrivatePostgres, dropLeftoverClusters } from './support/services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The private cluster, which a test may restart (privatePostgres). */
    postgresCluster: { name: string; port: number };
  }
}

/**
 * The fault suite's Postgres: a cluster of its own, which the tests may restart, with the migrated
 * template database that each test file clones. Removed at the end of the run.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  dropLeftoverClusters();
  const postgres = await createPrivatePostgres();
  project.provide('databaseUrl', postgres.url);
  project.provide('templateDatabase', await prepareTemplateDatabase(postgres.url));
  project.provide('postgresCluster', { name: postgres.name, port: Number(new URL(postgres.url).port) });
  buildProcesses();
  return () => postgres.drop();
}
