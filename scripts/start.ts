import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ApiConfigSchema, loadConfig } from '@smsgw/config';
import { createApiKey, createDb, createDevice, createUser, ensureDatabase, findUserByName, listDevices, migrate } from '@smsgw/db';

/**
 * `pnpm start`: the whole service on one machine, for a first look. Migrates the database, makes
 * sure a demo user with a demo device exists, starts the API, and prints a fresh demo API key and a
 * curl to try. Each process can also be run alone (README, "Running the processes").
 */
const env: Record<string, string | undefined> = { ...process.env };
// A secret for this run only; production sets its own (README, "Configuration").
env.JWT_SECRET ??= randomBytes(32).toString('base64url');
const config = loadConfig(ApiConfigSchema, env);

await ensureDatabase(config.DATABASE_URL);
const applied = await migrate(config.DATABASE_URL);
console.log(`database ready (${applied.length} migration(s) applied)`);

const db = createDb({ url: config.DATABASE_URL, poolSize: 1 });
const user = (await findUserByName(db, 'demo')) ?? (await createUser(db, { name: 'demo' }));
const { key } = await createApiKey(db, { userId: user.id, name: `demo ${new Date().toISOString()}` });
const devices = await listDevices(db, user.id);
if (devices.length === 0) await createDevice(db, { userId: user.id, name: 'demo-phone' });
else await db.device.updateMany({ where: { userId: user.id, deletedAt: null }, data: { lastSeenAt: new Date() } });
await db.$disconnect();

const children: ChildProcess[] = [];
function run(name: string, script: string): void {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping`);
      stop(1);
    }
  });
  children.push(child);
}

let stopping = false;
function stop(code: number): void {
  stopping = true;
  for (const child of children.reverse()) child.kill('SIGTERM');
  Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve))))).then(() =>
    process.exit(code),
  );
}
process.once('SIGINT', () => stop(0));
process.once('SIGTERM', () => stop(0));

run('api', 'apps/api/src/server.ts');

const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
console.log(`
smsgw is starting on ${base} (API docs: ${base}/docs)

Demo user:    ${user.id}
Demo API key: ${key}

Try:
  curl -s -X POST ${base}/api/sms/send \\
    -H 'X-API-Key: ${key}' -H 'Content-Type: application/json' \\
    -d '{"recipients": ["+15551234567"], "body": "Hello from smsgw"}'
  curl -s ${base}/api/v1/sms -H 'Authorization: Bearer ${key}'

Stop with Ctrl-C.
`);
