import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createProducerConnection, deletePrefix, withKeyPrefix } from '@smsgw/queue';

/**
 * The real smsgw processes (API, dispatchers, simulated devices, modem agents) as child processes, for the
 * end-to-end tests and the end-to-end benchmark.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export type ProcessKind = 'api' | 'dispatcher' | 'device-sim' | 'modem-agent';

/** Bundles the processes (scripts/build.mjs), as `pnpm start` runs them. */
export function buildProcesses(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
}

export interface ClusterOptions {
  databaseUrl: string;
  queuePrefix: string;
  dispatchers: number;
  /** Native simulated phones, all in one device-sim process (`devices`). */
  deviceTokens?: string[];
  /** Simulated SMS Gate phones, one per pairing code or token, all in one device-sim process (`phones`). */
  pairings?: string[];
  /** Where the simulators write `sent.jsonl`, a line per message sent. */
  logDir: string;
  env?: Record<string, string>;
  simEnv?: Record<string, string>;
}

/** Simulated devices in one device-sim process: native ones by token, SMS Gate phones by pairing. */
export type SimDevices = { protocol: 'native'; tokens: string[] } | { protocol: 'sms-gate'; pairings: string[] };

export interface Cluster {
  baseUrl: string;
  readonly processes: Map<string, ChildProcess>;
  startDispatcher(name: string): ChildProcess;
  /** Starts the API again (after `kill('api', …)`) and waits until it answers /health. */
  startApi(): Promise<void>;
  /** Starts another API process named `name`, on a port of its own, and gives its base URL once it answers /health (the devices stay on the first). */
  startOtherApi(name: string): Promise<string>;
  /** Every line a process wrote to stdout or stderr so far (its pino log), across its restarts. */
  output(name: string): string[];
  /** Starts a device-sim process named `name` and waits until `expectStreams` devices in all hold a stream. */
  startSim(name: string, devices: SimDevices, expectStreams: number, env?: Record<string, string>): Promise<ChildProcess>;
  /**
   * Starts a modem agent named `name` on this cluster's API with `env` (MODEM_PORT, SMSGW_DEVICE_TOKEN,
   * MODEM_STATE_FILE, …) and waits until `expectStreams` devices in all hold a stream.
   */
  startModemAgent(name: string, env: Record<string, string>, expectStreams: number): Promise<ChildProcess>;
  /** Sends `signal` and waits for the process to exit. */
  kill(name: string, signal: NodeJS.Signals): Promise<void>;
  /** Sends `signal` (SIGSTOP, SIGCONT, …) without waiting. */
  signal(name: string, signal: NodeJS.Signals): void;
  /** Stops every process (SIGTERM, in reverse order of start) and waits for them. */
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts the bundled process `kind` as `name` with `env`, its output lines appended to `lines`;
 * `prefix` runs it through another command (`ip netns exec <host>`, topology tests).
 * CLUSTER_STDOUT=1 shows the processes' logs (pino writes to stdout), when a run needs a look;
 * CLUSTER_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the processes of a run.
 */
export function spawnSmsgw(name: string, kind: ProcessKind, env: NodeJS.ProcessEnv, lines: string[], prefix: string[] = []): ChildProcess {
  const flags = process.env.CLUSTER_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const node = [process.execPath, ...flags, '--enable-source-maps', `dist/${kind}.mjs`];
  const [command, ...args] = [...prefix, ...node] as [string, ...string[]];
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const [stream, echo] of [
    [child.stdout, process.env.CLUSTER_STDOUT ? process.stdout : null],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: stream! }).on('line', (line) => {
      lines.push(line);
      echo?.write(`[${name}] ${line}\n`);
    });
  }
  return child;
}

/**
 * `node dist/<bundle>.mjs args…` in `env` (the whole environment), run to its end: its exit code
 * and every line it wrote. One that has not ended by itself within `killAfterMs` is killed (code
 * null), so a code says it ended by itself.
 */
export async function runBundle(
  bundle: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  killAfterMs = 20_000,
): Promise<{ code: number | null; output: string; lines: string[] }> {
  const child = spawn(process.execPath, [`dist/${bundle}.mjs`, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, output, lines: output.split('\n').filter(Boolean) };
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    QUEUE_PREFIX: options.queuePrefix,
    JWT_SECRET: 'end-to-end-secret-of-at-least-32-characters',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...options.env,
  };
  const processes = new Map<string, ChildProcess>();
  const order: string[] = [];

  const outputs = new Map<string, string[]>();
  function start(name: string, kind: ProcessKind, extra: Record<string, string> = {}): ChildProcess {
    const lines = outputs.get(name) ?? [];
    outputs.set(name, lines);
    const child = spawnSmsgw(name, kind, { ...env, ...extra }, lines);
    processes.set(name, child);
    if (!order.includes(name)) order.push(name);
    return child;
  }

  async function stop(): Promise<void> {
    for (const name of [...order].reverse()) {
      const child = processes.get(name);
      if (!child) continue;
      child.kill('SIGTERM');
      await exited(child);
    }
    // A Redis over TLS is a test's own (test/topologies), gone with it: this process does not trust its CA.
    if (env.REDIS_TLS === 'true') return;
    // Where the processes' Redis is: REDIS_URL, or a cluster or Sentinels (test/topologies).
    const settings = withKeyPrefix({
      REDIS_URL: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: env.REDIS_CLUSTER_NODES,
      REDIS_SENTINELS: env.REDIS_SENTINELS,
      REDIS_SENTINEL_NAME: env.REDIS_SENTINEL_NAME ?? 'mymaster',
      QUEUE_PREFIX: options.queuePrefix,
    });
    const redis = createProducerConnection(settings, { lazyConnect: true, enableOfflineQueue: true });
    redis.on('error', () => undefined);
    await redis.connect();
    await deletePrefix(redis, settings.QUEUE_PREFIX);
    redis.disconnect();
  }

  const simLog = join(options.logDir, 'sent.jsonl');
  const startSim = (name: string, devices: SimDevices, extra: Record<string, string> = {}) =>
    start(name, 'device-sim', {
      SMSGW_URL: baseUrl,
      SIM_LOG_FILE: simLog,
      ...(devices.protocol === 'native'
        ? { SIM_PROTOCOL: 'native', DEVICE_TOKEN: devices.tokens.join(',') }
        : // No pairings: the phones of SIM_STATE_DIR (in `extra`), enrolled earlier.
          { SIM_PROTOCOL: 'sms-gate', ...(devices.pairings.length > 0 && { SIM_PAIRING: devices.pairings.join(',') }) }),
      ...options.simEnv,
      ...extra,
    });
  try {
    start('api', 'api');
    await waitForHealth(`${baseUrl}/health`, processes.get('api')!);
    for (let i = 0; i < options.dispatchers; i++) start(`dispatcher-${i}`, 'dispatcher');
    if (options.deviceTokens?.length) startSim('devices', { protocol: 'native', tokens: options.deviceTokens });
    if (options.pairings?.length) startSim('phones', { protocol: 'sms-gate', pairings: options.pairings });
    await waitForStreams(options.databaseUrl, (options.deviceTokens?.length ?? 0) + (options.pairings?.length ?? 0), processes);
  } catch (error) {
    // Nobody holds the cluster yet to stop what did start.
    await stop();
    throw error;
  }

  return {
    baseUrl,
    processes,
    startDispatcher: (name) => start(name, 'dispatcher'),
    async startApi() {
      await waitForHealth(`${baseUrl}/health`, start('api', 'api'));
    },
    async startOtherApi(name) {
      const url = `http://127.0.0.1:${await freePort()}`;
      await waitForHealth(`${url}/health`, start(name, 'api', { PORT: new URL(url).port }));
      return url;
    },
    output: (name) => outputs.get(name) ?? [],
    async startSim(name, devices, expectStreams, extra) {
      const child = startSim(name, devices, extra);
      await waitForStreams(options.databaseUrl, expectStreams, processes);
      return child;
    },
    async startModemAgent(name, extra, expectStreams) {
      const child = start(name, 'modem-agent', { SMSGW_URL: baseUrl, ...extra });
      await waitForStreams(options.databaseUrl, expectStreams, processes);
      return child;
    },
    signal(name, signal) {
      processes.get(name)?.kill(signal);
    },
    async kill(name, signal) {
      const child = processes.get(name);
      if (!child) return;
      child.kill(signal);
      await exited(child);
    },
    stop,
  };
}

export async function waitForHealth(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before it was up`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} not up within ${timeoutMs} ms`);
}

/**
 * Waits until `count` devices have opened their event stream: only a connected device is
 * available, so a send before that would find no device.
 */
export async function waitForStreams(databaseUrl: string, count: number, processes: Map<string, ChildProcess>, timeoutMs = 60_000): Promise<void> {
  if (count === 0) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM devices WHERE stream_seen_at IS NOT NULL AND deleted_at IS NULL');
      if ((rows[0]?.n ?? 0) >= count) return;
      for (const [name, child] of processes) {
        if (child.exitCode !== null && child.signalCode === null) throw new Error(`${name} exited with ${child.exitCode} before the devices connected`);
      }
      if (Date.now() > deadline) throw new Error(`fewer than ${count} devices connected within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

/** Every message id the simulated devices recorded as sent, with repeats. */
export async function sentIds(logDir: string): Promise<string[]> {
  const text = await readFile(join(logDir, 'sent.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
}
