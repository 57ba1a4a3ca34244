import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { deletePrefix } from '@smsgw/queue';
import { freePort, spawnSmsgw, waitForHealth, waitForStreams, type ProcessKind } from '../../support/cluster.ts';
import { DelayLink } from './delay-link.ts';
import { createNetnsHost, type NetnsHost } from './netns.ts';

/**
 * smsgw spread over two hosts, `a` and `b`, each running an API and a dispatcher (issue 28,
 * "Several hosts"). With `delayMs` each host is a network namespace whose processes reach Postgres
 * and Redis through links that add `delayMs` each way (one link per process and store, so that
 * each process's round trips are counted on its own); without, all of them run on this machine's
 * loopback, for the same run to compare against. The simulated devices (native protocol) run on
 * this machine and hold their streams on host a's API; sends go where the caller points them.
 */
export interface Hosts {
  /** The API of each host, as this machine reaches it. */
  apiUrl: { a: string; b: string };
  /** The round-trip counters of each process's links: `api-a` → { postgres, redis }. Empty on loopback. */
  links: Map<string, { postgres: DelayLink; redis: DelayLink }>;
  output(name: string): string[];
  stop(): Promise<void>;
}

export interface HostsOptions {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  logDir: string;
  deviceTokens: string[];
  /** Added each way on every link to Postgres and Redis; undefined: everything on loopback. */
  delayMs?: number;
  env?: Record<string, string>;
  simEnv?: Record<string, string>;
}

const LABELS = ['a', 'b'] as const;

export async function startHosts(options: HostsOptions): Promise<Hosts> {
  const netns = new Map<string, NetnsHost>();
  const links = new Map<string, { postgres: DelayLink; redis: DelayLink }>();
  const children: { name: string; child: ChildProcess }[] = [];
  const outputs = new Map<string, string[]>();
  const apiUrl = { a: '', b: '' };
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    QUEUE_PREFIX: options.queuePrefix,
    JWT_SECRET: 'topology-test-secret-of-at-least-32-characters',
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const run = (name: string, kind: ProcessKind, env: NodeJS.ProcessEnv, prefix: string[] = []) => {
    const lines: string[] = [];
    outputs.set(name, lines);
    const child = spawnSmsgw(name, kind, { ...base, ...env }, lines, prefix);
    children.push({ name, child });
    return child;
  };

  async function stop(): Promise<void> {
    for (const { child } of [...children].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    for (const link of links.values()) await Promise.all([link.postgres.close(), link.redis.close()]);
    for (const host of netns.values()) host.remove();
    const redis = new Redis(options.redisUrl);
    await deletePrefix(redis, options.queuePrefix);
    redis.disconnect();
  }

  try {
    for (const label of LABELS) {
      const host = options.delayMs === undefined ? undefined : createNetnsHost(label);
      if (host) netns.set(label, host);
      const stores = async (name: string) => {
        if (!host) return { DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl };
        const postgres = await linkTo(options.databaseUrl, 5432, host.gateway, options.delayMs!);
        const redis = await linkTo(options.redisUrl, 6379, host.gateway, options.delayMs!);
        links.set(name, { postgres: postgres.link, redis: redis.link });
        return { DATABASE_URL: postgres.url, REDIS_URL: redis.url };
      };
      const port = await freePort();
      const api = run(`api-${label}`, 'api', { ...(await stores(`api-${label}`)), HOST: host ? '0.0.0.0' : '127.0.0.1', PORT: String(port) }, host?.command);
      apiUrl[label] = `http://${host?.address ?? '127.0.0.1'}:${port}`;
      await waitForHealth(`${apiUrl[label]}/health`, api);
      run(`dispatcher-${label}`, 'dispatcher', await stores(`dispatcher-${label}`), host?.command);
    }
    run('devices', 'device-sim', {
      DATABASE_URL: options.databaseUrl,
      SMSGW_URL: apiUrl.a,
      SIM_PROTOCOL: 'native',
      DEVICE_TOKEN: options.deviceTokens.join(','),
      SIM_LOG_FILE: join(options.logDir, 'sent.jsonl'),
      ...options.simEnv,
    });
    await waitForStreams(options.databaseUrl, options.deviceTokens.length, new Map(children.map(({ name, child }) => [name, child])));
  } catch (error) {
    await stop();
    throw error;
  }
  return { apiUrl, links, output: (name) => outputs.get(name) ?? [], stop };
}

/** A delaying link on `gateway` to the store of `url`; the URL that goes through it. */
async function linkTo(url: string, defaultPort: number, gateway: string, delayMs: number): Promise<{ link: DelayLink; url: string }> {
  const target = new URL(url);
  const link = await DelayLink.open({ host: gateway, target: { host: target.hostname, port: Number(target.port || defaultPort) }, delayMs });
  target.hostname = gateway;
  target.port = String(link.port);
  return { link, url: target.toString() };
}
