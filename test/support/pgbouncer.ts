import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { freePort } from './cluster.ts';

/**
 * A PgBouncer of the test's own in front of the test Postgres, in transaction pooling mode with
 * PgBouncer's defaults otherwise (no protocol-level prepared statements: max_prepared_statements 0),
 * on a free port with its own ini; stopped by `stop`. Debian's package may run a system PgBouncer on
 * 6432: this one never touches it. CI installs the package (.ci/run).
 */
export interface PgBouncer {
  /** `databaseUrl` (a database of the Postgres behind it) as reached through this PgBouncer. */
  pooled(databaseUrl: string): string;
  /**
   * PgBouncer's own count of the transactions it passed to `database`, from its admin console
   * (`SHOW STATS`): how a test tells what went through it.
   */
  transactions(database: string): Promise<number>;
  /** Every line it logged so far. */
  output(): string[];
  stop(): Promise<void>;
}

const BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path));

export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  if (!BINARY) throw new Error('pgbouncer is not installed: apt-get install -y pgbouncer (.ci/run does it)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'smsgw-pgbouncer-'));
  // PgBouncer refuses to run as root: there it drops to `nobody`, which must read the files.
  await chmod(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  const users = join(dir, 'users.txt');
  await writeFile(users, `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn(BINARY, [...(asRoot ? ['-u', 'nobody'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const up = new Promise<void>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (line.includes('process up')) resolve();
      });
    }
    child.once('exit', (code) => reject(new Error(`pgbouncer exited with ${code} before it was up:\n${lines.join('\n')}`)));
  });
  await up.catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });

  const pooled = (databaseUrl: string) => Object.assign(new URL(databaseUrl), { hostname: '127.0.0.1', port: String(port) }).toString();
  return {
    pooled,
    async transactions(database) {
      const admin = new pg.Client({ connectionString: pooled(Object.assign(new URL(serverUrl), { pathname: '/pgbouncer' }).toString()) });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ database: string; total_xact_count: string }>('SHOW STATS');
        return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
      } finally {
        await admin.end();
      }
    },
    output: () => lines,
    async stop() {
      await stopProcess(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** SIGTERM (PgBouncer's immediate shutdown), and the exit. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}
