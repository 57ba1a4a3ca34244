import { execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { LaggingLink } from './lagging-link.ts';

/**
 * Private redis-server processes for the topology tests: a 3-primary cluster with a replica each,
 * and a primary with a replica (through a lagging link) watched by 3 Sentinels. Each set lives in a
 * temporary directory of its own (configuration, node tables, the pids that `removeLeftoverServers`
 * ends when a run was interrupted) and keeps nothing on disk otherwise.
 */
const DIR_PREFIX = 'smsgw-redis-topology-';

export interface RedisServer {
  port: number;
  /** SIGKILL: gone at once, as a crashed host. */
  kill(): Promise<void>;
  readonly alive: boolean;
}

interface Servers {
  servers: RedisServer[];
  stop(): Promise<void>;
}

/** How a test's own client reaches a server: in the clear and without a password unless said. */
export interface ServerAccess {
  /** TLS, trusting this CA (PEM). */
  ca?: Buffer;
  username?: string;
  password?: string;
}

/**
 * Starts `redis-server <conf>` (with `--sentinel` for a Sentinel) for each of `configs` and waits
 * until each answers PING. With `tls`, each listens for TLS only, on its port, with those files.
 */
export async function startServers(
  name: string,
  configs: { port: number; conf: string; sentinel?: boolean; access?: ServerAccess }[],
  tls?: { cert: string; key: string; ca: string },
): Promise<Servers> {
  const dir = await mkdtemp(join(tmpdir(), `${DIR_PREFIX}${name}-`));
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const { port, conf, sentinel } of configs) {
      const file = join(dir, `${port}.conf`);
      const listen = tls
        ? `port 0\ntls-port ${port}\ntls-cert-file ${tls.cert}\ntls-key-file ${tls.key}\ntls-ca-cert-file ${tls.ca}\ntls-auth-clients no\ntls-replication yes\ntls-cluster yes`
        : `port ${port}`;
      await writeFile(file, `${listen}\nbind 127.0.0.1\ndir ${dir}\nsave ""\nappendonly no\nrepl-diskless-sync-delay 0\n${conf}`);
      const child = spawn('redis-server', [file, ...(sentinel ? ['--sentinel'] : [])], { stdio: 'ignore' });
      await writeFile(join(dir, `${port}.pid`), String(child.pid));
      servers.push({
        port,
        get alive() {
          return child.exitCode === null && child.signalCode === null;
        },
        async kill() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
        },
      });
    }
    await Promise.all(configs.map(({ port, access }) => waitForPing(port, access)));
    return { servers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForPing(port: number, access: ServerAccess = {}, timeoutMs = 10_000): Promise<void> {
  await until(`redis-server on ${port} answers`, timeoutMs, async () => (await commandAs(access, port, 'PING')) === 'PONG');
}

/** One command to the server on `port`, on a connection of its own; null when it cannot be reached. */
export function command(port: number, ...args: string[]): Promise<unknown> {
  return commandAs({}, port, ...args);
}

/** `command` to a server that speaks TLS or wants a password. */
export async function commandAs(access: ServerAccess, port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    ...(access.ca && { tls: { ca: access.ca } }),
    ...(access.username && { username: access.username }),
    ...(access.password && { password: access.password }),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(args[0]!, ...args.slice(1));
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

/**
 * `count` different ports that are free, each with its port + 10000 (a cluster node's bus), picked
 * below Linux's ephemeral range (32768 and up): a port from that range may be taken by an outgoing
 * connection between the check and the server's start, and a busy machine makes thousands.
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = randomInt(12_000, 22_000);
    if (!ports.includes(port) && (await canListen(port)) && (await canListen(port + 10_000))) ports.push(port);
  }
  return ports;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function inSync(replication: unknown): boolean {
  return String(replication).includes('master_link_status:up');
}

export async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Ends the servers of runs that were interrupted before their clean-up, and removes their directories. */
export async function removeLeftoverServers(): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    for (const file of (await readdir(dir)).filter((f) => f.endsWith('.pid'))) {
      const pid = Number(await readFile(join(dir, file), 'utf8'));
      try {
        // Only a redis-server of ours: a pid may have been reused since.
        if ((await readFile(`/proc/${pid}/comm`, 'utf8')).startsWith('redis-')) process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
}

export interface RedisCluster {
  /** REDIS_CLUSTER_NODES: every node, primaries and replicas. */
  nodes: string;
  servers: RedisServer[];
  /** The server that is primary of `slot` now, as the surviving nodes see it. */
  primaryOf(slot: number): Promise<RedisServer>;
  /** Waits until a node other than `former` serves `slot` as primary and the cluster state is ok. */
  waitForPromotion(slot: number, former: RedisServer, timeoutMs?: number): Promise<RedisServer>;
  stop(): Promise<void>;
}

/** 3 primaries and 3 replicas (`redis-cli --cluster create … --cluster-replicas 1`), a node counted failed after 1 s. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const ports = await freePorts(6);
  const { servers, stop } = await startServers(
    'cluster',
    ports.map((port) => ({ port, conf: `cluster-enabled yes\ncluster-config-file nodes-${port}.conf\ncluster-node-timeout 1000\n` })),
  );
  try {
    await promisify(execFile)('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes']);
    await until('the cluster is ok on every node, each replica in sync', 30_000, async () => {
      const states = await Promise.all(ports.map((port) => command(port, 'CLUSTER', 'INFO')));
      const links = await Promise.all(ports.map((port) => command(port, 'INFO', 'replication')));
      const replicas = links.filter((info) => String(info).includes('role:slave'));
      return states.every((info) => String(info).includes('cluster_state:ok')) && replicas.length === 3 && replicas.every(inSync);
    });
  } catch (error) {
    await stop();
    throw error;
  }

  async function primaryOf(slot: number): Promise<RedisServer> {
    for (const server of servers.filter((s) => s.alive)) {
      const slots = (await command(server.port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][] | null;
      const range = slots?.find(([from, to]) => slot >= from && slot <= to);
      const primary = range && servers.find((s) => s.port === range[2][1]);
      if (primary) return primary;
    }
    throw new Error(`no node knows the primary of slot ${slot}`);
  }

  return {
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    servers,
    primaryOf,
    async waitForPromotion(slot, former, timeoutMs = 30_000) {
      let promoted: RedisServer | undefined;
      await until(`a replica serves slot ${slot}`, timeoutMs, async () => {
        promoted = await primaryOf(slot).catch(() => undefined);
        if (!promoted || promoted === former) return false;
        return String(await command(promoted.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok');
      });
      return promoted!;
    },
    stop,
  };
}

export interface RedisSentinels {
  /** REDIS_SENTINELS. */
  sentinels: string;
  /** REDIS_SENTINEL_NAME. */
  name: string;
  primary: RedisServer;
  replica: RedisServer;
  /** The primary's host dies: its process, and what its replication link had not delivered yet. */
  crashPrimary(): Promise<void>;
  /** Waits until the Sentinels name another primary than `former` and it answers as one. */
  waitForFailover(former: RedisServer, timeoutMs?: number): Promise<RedisServer>;
  stop(): Promise<void>;
}

/**
 * A primary, its replica, and 3 Sentinels that count the primary down after 1 s of silence. The
 * primary is reached through a LaggingLink: its replica is `replicationDelayMs` behind (another zone).
 */
export async function startRedisSentinels(options: { replicationDelayMs: number }): Promise<RedisSentinels> {
  const name = 'smsgw';
  const [primaryPort, replicaPort, ...sentinelPorts] = await freePorts(5);
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const each of stops.splice(0).reverse()) await each();
  };
  try {
    const primarySet = await startServers('sentinel-primary', [{ port: primaryPort!, conf: '' }]);
    stops.push(primarySet.stop);
    const primary = primarySet.servers[0]!;
    const link = await LaggingLink.open(primaryPort!, options.replicationDelayMs);
    stops.push(() => link.close());
    const replicaSet = await startServers('sentinel-replica', [{ port: replicaPort!, conf: `replicaof 127.0.0.1 ${link.port}\n` }]);
    stops.push(replicaSet.stop);
    await until('the replica is in sync', 20_000, async () => inSync(await command(replicaPort!, 'INFO', 'replication')));
    // The Sentinels monitor the primary at the link's address, as the replica follows it.
    const watch = [
      `sentinel monitor ${name} 127.0.0.1 ${link.port} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
    ].join('\n');
    const sentinels = await startServers(
      'sentinels',
      sentinelPorts.map((port) => ({ port, conf: `${watch}\n`, sentinel: true })),
    );
    stops.push(sentinels.stop);
    // Each Sentinel must know the replica (from the primary's INFO) and the others (their hellos).
    await until('every Sentinel sees the replica and the others', 20_000, async () => {
      for (const port of sentinelPorts) {
        const [replicas, others] = await Promise.all([command(port, 'SENTINEL', 'REPLICAS', name), command(port, 'SENTINEL', 'SENTINELS', name)]);
        if (!Array.isArray(replicas) || replicas.length !== 1 || !Array.isArray(others) || others.length !== 2) return false;
      }
      return true;
    });
    const replica = replicaSet.servers[0]!;
    return {
      sentinels: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
      name,
      primary,
      replica,
      async crashPrimary() {
        link.cut();
        await primary.kill();
      },
      async waitForFailover(former, timeoutMs = 30_000) {
        let promoted: RedisServer | undefined;
        await until('the Sentinels promote the replica', timeoutMs, async () => {
          const address = (await command(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string] | null;
          promoted = Number(address?.[1]) === link.port ? primary : [primary, replica].find((server) => server.port === Number(address?.[1]));
          if (!promoted || promoted === former) return false;
          return String(await command(promoted.port, 'ROLE')).startsWith('master');
        });
        return promoted!;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
