import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { freePort } from '../../support/cluster.ts';

/**
 * Private Postgres clusters and Redis servers for the fault suite: a test may restart, stall or wipe
 * them without touching the machine's shared services or the other tests.
 */
const CLUSTER_PREFIX = 'smsgw_fault_';

function postgresVersion(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('no PostgreSQL server under /usr/lib/postgresql');
  return versions[0];
}

async function pgctl(...args: string[]): Promise<void> {
  await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', ...args]);
}

export interface PrivatePostgres {
  /** The cluster's name (pg_lsclusters). */
  name: string;
  /** URL of the cluster's `postgres` database. */
  url: string;
  /** pg_ctlcluster restart -m fast: every connection is terminated, then the server comes back. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  drop(): void;
}

/** A new Postgres cluster (pg_createcluster) on a free port, trust authentication, no fsync. */
export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const version = postgresVersion();
  const name = `${CLUSTER_PREFIX}${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  execFileSync(
    'pg_createcluster',
    [
      version,
      name,
      '--port',
      String(port),
      '--start',
      '-o',
      'fsync=off',
      '-o',
      'synchronous_commit=off',
      '-o',
      'full_page_writes=off',
      '-o',
      'max_connections=200',
      '--',
      '--auth=trust',
    ],
    { stdio: 'pipe' },
  );
  return privatePostgres(name, port);
}

/** The cluster `name` that `createPrivatePostgres` made (in another process: the global set-up). */
export function privatePostgres(name: string, port: number): PrivatePostgres {
  const version = postgresVersion();
  return {
    name,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    restart: () => pgctl(version, name, 'restart', '-m', 'fast'),
    stop: () => pgctl(version, name, 'stop', '-m', 'fast'),
    start: () => pgctl(version, name, 'start'),
    drop: () => execFileSync('pg_dropcluster', ['--stop', version, name], { stdio: 'pipe' }),
  };
}

/** Drops the clusters that runs killed before their clean-up left behind. */
export function dropLeftoverClusters(): void {
  const version = postgresVersion();
  const listing = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' });
  for (const line of listing.split('\n')) {
    const [ver, name] = line.trim().split(/\s+/);
    if (ver === version && name?.startsWith(CLUSTER_PREFIX)) execFileSync('pg_dropcluster', ['--stop', ver, name], { stdio: 'pipe' });
  }
}

export interface PrivateRedis {
  url: string;
  /** SIGKILL and start again on the same port, empty (it keeps nothing on disk). */
  restartEmpty(): Promise<void>;
  /** Stops the server (SIGKILL) until `start`. */
  kill(): Promise<void>;
  /** Starts it again after `kill` (nothing when it runs). */
  start(): Promise<void>;
  /** CLIENT PAUSE: every client's commands wait `ms`. */
  pause(ms: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;

  async function start(): Promise<void> {
    if (server) return;
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      const up = await client.connect().then(
        () => client.ping(),
        () => null,
      );
      client.disconnect();
      if (up === 'PONG') return;
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} not up`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function kill(): Promise<void> {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }

  await start();
  return {
    url,
    start,
    kill,
    async restartEmpty() {
      await kill();
      await start();
    },
    async pause(ms) {
      const client = new Redis(url);
      await client.call('CLIENT', 'PAUSE', String(ms), 'ALL');
      client.disconnect();
    },
    stop: kill,
  };
}
