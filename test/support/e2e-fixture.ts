import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { createApiKey, createUser, type Db } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { startCluster, type Cluster, type ClusterOptions } from './cluster.ts';

/**
 * What an end-to-end test stands on: a database cloned from the template, a directory for the
 * simulators' logs and state, the real processes (cluster.ts), and whatever else the test opens
 * (a webhook receiver, a relay, a modem). Everything is torn down in reverse order of set-up, so a
 * thing opened after the cluster (a relay in front of the API) goes before the processes stop, and
 * a thing opened before it (the modem's pseudo-terminal) after.
 */
export interface E2e {
  database: TestDatabase;
  /** A Prisma client on the database, opened on first use. */
  readonly db: Db;
  /** A directory of its own: the simulators' `sent.jsonl`, state files. */
  logDir: string;
  /** The processes, once `startCluster` has run. */
  readonly cluster: Cluster;
  /** Starts the processes on this database, with a queue prefix of their own. */
  startCluster(options?: E2eClusterOptions): Promise<Cluster>;
  /** A user with an API key. */
  user(name: string, monthlyQuota?: number): Promise<{ user: User; key: string }>;
  /** An HTTP server on loopback (a webhook or callback receiver), closed at teardown; its base URL. */
  listen(handler: RequestListener): Promise<string>;
  /** Runs `cleanup` at teardown, before what was set up earlier is torn down. */
  defer(cleanup: () => unknown): void;
  close(): Promise<void>;
}

type User = Awaited<ReturnType<typeof createUser>>;
export type E2eClusterOptions = Partial<Omit<ClusterOptions, 'databaseUrl' | 'queuePrefix' | 'logDir'>>;

/** Opens an end-to-end environment named `name` (in its queue prefix and directory). */
export async function openE2e(name: string): Promise<E2e> {
  const cleanups: (() => unknown)[] = [];
  const defer = (cleanup: () => unknown) => void cleanups.push(cleanup);
  const database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  defer(() => database.drop());
  let db: Db | undefined;
  defer(() => db?.$disconnect());
  const openDb = () => (db ??= createDb({ url: database.url, poolSize: 2 }));
  const logDir = await mkdtemp(join(tmpdir(), `smsgw-${name}-`));
  defer(() => rm(logDir, { recursive: true, force: true }));
  let cluster: Cluster | undefined;

  return {
    database,
    logDir,
    defer,
    get db() {
      return openDb();
    },
    get cluster() {
      if (!cluster) throw new Error('the cluster has not been started');
      return cluster;
    },
    async startCluster(options = {}) {
      const started = await startCluster({
        dispatchers: 2,
        ...options,
        databaseUrl: database.url,
        queuePrefix: `smsgw-${name}-${randomBytes(4).toString('hex')}`,
        logDir,
      });
      cluster = started;
      defer(() => started.stop());
      return started;
    },
    async user(userName, monthlyQuota = 1000) {
      const user = await createUser(openDb(), { name: userName, monthlyQuota });
      const { key } = await createApiKey(openDb(), { userId: user.id, name: userName });
      return { user, key };
    },
    async listen(handler) {
      const server = createServer(handler);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      defer(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    },
  };
}

/** Environments for the tests of a file (or `describe` block), each torn down after its test. */
export function e2ePerTest(name: string): () => Promise<E2e> {
  const open: E2e[] = [];
  afterEach(async () => {
    for (const e2e of open.splice(0).reverse()) await e2e.close();
  });
  return async () => {
    const e2e = await openE2e(name);
    open.push(e2e);
    return e2e;
  };
}

/**
 * One environment for all the tests of a file (or `describe` block): opened, and set up by `setUp`,
 * before the first test, torn down after the last. The returned function gives it to the tests.
 */
export function e2eForAll(name: string, setUp: (e2e: E2e) => Promise<void> = async () => undefined, timeout = 120_000): () => E2e {
  let open: E2e | undefined;
  beforeAll(async () => {
    open = await openE2e(name);
    await setUp(open);
  }, timeout);
  afterAll(async () => {
    await open?.close();
  }, 60_000);
  return () => {
    if (!open) throw new Error('the end-to-end environment is not open');
    return open;
  };
}
