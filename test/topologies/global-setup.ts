import type { TestProject } from 'vitest/node';
import setupTestServices from '../global-setup.ts';
import { removeLeftoverHosts } from './support/netns.ts';
import { removeLeftoverServers } from './support/redis-servers.ts';

/**
 * The topology suite (`./pnpmw test:topologies`): smsgw's processes over stores and networks as
 * deployments past one machine have them. It runs on the machine's Postgres and Redis like the
 * end-to-end tests (a database cloned from the template per file), and removes the network
 * namespaces and ends the Redis servers (Cluster, Sentinel) an interrupted earlier run left behind.
 */
export default async function setup(project: TestProject): Promise<void> {
  removeLeftoverHosts();
  await removeLeftoverServers();
  await setupTestServices(project);
}
