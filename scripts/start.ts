import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { ApiConfigSchema, loadConfigOrExit, publicUrl } from '@smsgw/config';
import { pairingSteps } from '@smsgw/core';
import { createApiKey, createDevice, createPairing, createUser, ensureDatabase, findUserByName, listDevices, migrate, rotateDeviceToken } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';

/**
 * `pnpm start`: the whole service on one machine, for a first look. Migrates the database, makes
 * sure a demo user with a demo device exists, starts the API, one dispatcher and a simulated phone
 * for the demo device, and prints a fresh demo API key, a curl to try, and a pairing with which a
 * real phone joins the demo user (docs/devices.md). Each process can also be run alone (docs/operations.md,
 * "Running the processes").
 */
const env: Record<string, string | undefined> = { ...process.env };
// A secret for this run only; production sets its own (docs/operations.md, "Configuration").
env.JWT_SECRET ??= randomBytes(32).toString('base64url');
const config = loadConfigOrExit(ApiConfigSchema, env);

// Before anything is touched: a second `start` must not rotate the running demo's device token.
if (!(await portIsFree(config.HOST, config.PORT))) {
  console.error(`Port ${config.PORT} on ${config.HOST} is in use: is smsgw already running? Stop it, or start this one with PORT=<another port>.`);
  process.exit(1);
}

// Past a transaction pooler when DATABASE_DIRECT_URL names Postgres itself (docs/operations.md).
const migrationUrl = config.DATABASE_DIRECT_URL ?? config.DATABASE_URL;
await ensureDatabase(migrationUrl);
const applied = await migrate(migrationUrl);
console.log(`database ready (${applied.length} migration(s) applied)`);

const db = createDb({ url: config.DATABASE_URL, poolSize: 1 });
const user = (await findUserByName(db, 'demo')) ?? (await createUser(db, { name: 'demo' }));
const { key } = await createApiKey(db, { userId: user.id, name: `demo ${new Date().toISOString()}` });
const demoDevice = (await listDevices(db, user.id)).find((d) => d.name === 'demo-phone');
// The token is stored only as a hash, so the simulator gets a new one on every start.
const deviceToken = demoDevice
  ? await rotateDeviceToken(db, { userId: user.id, id: demoDevice.id })
  : (await createDevice(db, { userId: user.id, name: 'demo-phone' })).token;
const pairing = await createPairing(db, { userId: user.id, ttlSeconds: config.PAIRING_TTL_SECONDS });
await db.$disconnect();
const mobileUrl = `${publicUrl(config)}/mobile/v1`;

/** Whether the API could listen on host:port now. */
function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

const children: ChildProcess[] = [];
function run(name: string, extraEnv: Record<string, string> = {}): void {
  const child = spawn(process.execPath, ['--enable-source-maps', `dist/${name}.mjs`], {
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping`);
      stop(1);
    }
  });
  children.push(child);
}

/** Polls `check` every 200 ms until it holds, start-up is stopped, or `ms` have passed (then false). */
async function waitFor(check: () => Promise<boolean>, ms = Infinity): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (stopping || Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let stopping = false;
function stop(code: number): void {
  stopping = true;
  for (const child of children.reverse()) child.kill('SIGTERM');
  Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve))))).then(() => process.exit(code));
}
process.once('SIGINT', () => stop(0));
process.once('SIGTERM', () => stop(0));

const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
run('api');
run('dispatcher');
await waitFor(async () => (await fetch(`${base}/health`)).ok);
run('device-sim', { SMSGW_URL: base, DEVICE_TOKEN: deviceToken ?? '' });
// The banner comes last, once the demo phone holds its stream, so that start-up lines never push the key away.
const online = await waitFor(async () => {
  const res = await fetch(`${base}/api/v1/devices`, { headers: { 'x-api-key': key } });
  const { data } = (await res.json()) as { data: { name: string; available: boolean }[] };
  return data.some((d) => d.name === 'demo-phone' && d.available);
}, 15_000);
if (stopping) await new Promise(() => {}); // a child died: stop() exits
console.log(`
smsgw is running on ${base} (API docs: ${base}/docs)${online ? '' : '\n(the demo phone has not connected yet: see its log lines above)'}

Demo user:    ${user.id}
Demo API key: ${key}
Web console:  ${base}/console/ (sign in with the demo API key)

Try:
  curl -s -X POST ${base}/api/sms/send \\
    -H 'X-API-Key: ${key}' -H 'Content-Type: application/json' \\
    -d '{"recipients": ["+15551234567"], "body": "Hello from smsgw"}'
  curl -s ${base}/api/v1/sms -H 'Authorization: Bearer ${key}'

The demo phone (a simulator) sends it and reports it delivered within a second.

Pair a real Android phone with the demo user (docs/devices.md has the details):
  Code:       ${pairing.code}
  Token:      ${pairing.token}
  Mobile URL: ${mobileUrl}
  Expires:    ${pairing.expiresAt.toISOString()} (a new one: ./pnpmw smsgw device pair --user demo)
${pairingSteps({ ...pairing, mobileUrl })
  .map((step, i) => `  ${i + 1}. ${step}`)
  .join('\n')}
The phone must reach the mobile URL: set PUBLIC_URL to an https:// address in front of this API
(HOST=0.0.0.0, or a reverse proxy) for a real deployment.

Stop with Ctrl-C.
`);
