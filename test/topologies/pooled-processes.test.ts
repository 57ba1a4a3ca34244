import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice, createPairing } from '@smsgw/db';
import { freePort, runBundle } from '../support/cluster.ts';
import { e2eForAll } from '../support/e2e-fixture.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';

/**
 * The real processes with DATABASE_URL on a PgBouncer in transaction mode (issue 28, item 1): the
 * API and the dispatcher run their statements through it; the API holds its sessions (the LISTEN
 * of the credential cache, the listings' pool) on DATABASE_DIRECT_URL; the dispatcher and the CLI
 * need DATABASE_URL alone. An API given the pooler without DATABASE_DIRECT_URL refuses to start.
 */
// Names the API's direct connections in pg_stat_activity.
const DIRECT_APP = 'smsgw-direct';

let bouncer: PgBouncer;
let ownerId: string;
let native: { id: string; token: string };
const setUp = e2eForAll('pooled', async (e2e) => {
  bouncer = await startPgBouncer(e2e.database.url);
  e2e.defer(() => bouncer.stop());
  const { user } = await e2e.user('pooled');
  ownerId = user.id;
  const device = await createDevice(e2e.db, { userId: user.id, name: 'native' });
  native = { id: device.device.id, token: device.token };
  const pairing = await createPairing(e2e.db, { userId: user.id, name: 'sms-gate', ttlSeconds: 600 });
  await e2e.startCluster({
    dispatchers: 1,
    deviceTokens: [native.token],
    pairings: [pairing.code],
    env: {
      DATABASE_URL: bouncer.pooled(e2e.database.url),
      DATABASE_DIRECT_URL: `${e2e.database.url}?application_name=${DIRECT_APP}`,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SWEEP_INTERVAL_SECONDS: '1',
      MESSAGE_RETENTION_DAYS: '1',
    },
    simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '1' },
  });
});

const databaseName = () => new URL(setUp().database.url).pathname.slice(1);

/** `node dist/<bundle> args…` with `env` (and no DATABASE_DIRECT_URL of the test's): exit code and lines. */
async function run(bundle: 'api' | 'cli', env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; lines: string[] }> {
  const { DATABASE_DIRECT_URL: _, ...inherited } = process.env;
  const { code, lines } = await runBundle(bundle, args, { ...inherited, ...env });
  return { code, lines };
}

/** `smsgw args…` (the bundled CLI) on the pooled URL alone: its JSON. */
async function smsgw(...args: string[]): Promise<Record<string, unknown>> {
  const { code, lines } = await run('cli', { DATABASE_URL: bouncer.pooled(setUp().database.url) }, ...args);
  expect({ code, lines }).toMatchObject({ code: 0 });
  return JSON.parse(lines.join('\n'));
}

const errorLines = (name: string) =>
  setUp()
    .cluster.output(name)
    .filter((line) => line.includes('"level":50'));

describe('the processes on a transaction pooler', () => {
  it('deliver through a native device and an SMS Gate phone, with webhooks, listings, the sweep and the CLI', async () => {
    const e2e = setUp();
    const { cluster, db } = e2e;
    const ownerKey = (await smsgw('key', 'create', '--user', 'pooled')).api_key as string;
    const client = new SmsgwClient(cluster.baseUrl, ownerKey);

    const events: { type: string; data: { id: string } }[] = [];
    const hook = await e2e.listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    const created = await fetch(`${cluster.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${hook}/hook`, events: ['message.delivered'] }),
    });
    expect(created.status).toBe(201);

    const phone = await db.device.findFirstOrThrow({ where: { userId: ownerId, name: { not: 'native' } } });
    const ids: string[] = [];
    for (const device of [native.id, phone.id]) {
      ids.push(...(await client.send({ recipients: ['+15557654321'], body: `pooled to ${device}`, device_id: device })).message_ids);
    }
    await vi.waitFor(async () => expect((await client.listMessages({ status: 'delivered' })).data.map((m) => m.id).sort()).toEqual([...ids].sort()), {
      timeout: 30_000,
      interval: 200,
    });
    await vi.waitFor(() => expect(events.map((e) => e.data.id).sort()).toEqual([...ids].sort()), { timeout: 15_000, interval: 100 });
    expect(((await smsgw('message', 'list', '--user', 'pooled', '--status', 'delivered')).data as { id: string }[]).map((m) => m.id).sort()).toEqual(
      [...ids].sort(),
    );

    // The sweep's retention: a message finished two days ago goes (MESSAGE_RETENTION_DAYS 1).
    await e2e.db.$executeRaw`UPDATE messages SET updated_at = now() - interval '2 days' WHERE id = ${ids[0]}::uuid`;
    await vi.waitFor(async () => expect(await db.message.count({ where: { id: ids[0] } })).toBe(0), { timeout: 15_000, interval: 200 });

    expect(await bouncer.transactions(databaseName())).toBeGreaterThan(50);
    expect([...errorLines('api'), ...errorLines('dispatcher-0')]).toEqual([]);
  }, 90_000);

  it('refuses at once an API key revoked through the pooler: the API listens on DATABASE_DIRECT_URL', async () => {
    const e2e = setUp();
    const { user, key } = await e2e.user('revoked');
    const list = () => fetch(`${e2e.cluster.baseUrl}/api/v1/sms`, { headers: { authorization: `Bearer ${key}` } });
    expect((await list()).status).toBe(200);
    const keyId = (await e2e.db.apiKey.findFirstOrThrow({ where: { userId: user.id } })).id;

    await smsgw('key', 'revoke', '--user', 'revoked', '--key', keyId);

    // Served from the cache just before: only the announcement of the revocation refuses it this soon.
    await vi.waitFor(async () => expect((await list()).status).toBe(401), { timeout: 1000, interval: 20 });
    // The listening connection, last seen running its LISTEN or its probe, is a direct one.
    const listening = await e2e.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = ${DIRECT_APP} AND query IN ('LISTEN smsgw_credentials', 'SELECT 1')`;
    expect(listening).toEqual([{ n: 1 }]);
  });

  it('an API given the pooler without DATABASE_DIRECT_URL says so in one line and exits 1', async () => {
    const pooled = bouncer.pooled(setUp().database.url);
    const result = await run('api', { DATABASE_URL: pooled, JWT_SECRET: 'pooled-test-secret-of-at-least-32-chars', PORT: String(await freePort()) });
    const where = `127.0.0.1:${new URL(pooled).port}/${databaseName()}`;
    expect(result).toEqual({
      code: 1,
      lines: [
        `DATABASE_URL (${where}) reaches Postgres through a connection pooler, which keeps no session for the API (its LISTEN for credential ` +
          'changes, the settings of its listings): set DATABASE_DIRECT_URL to a connection straight to Postgres, or to DATABASE_URL itself ' +
          'if the pooler is in session mode (docs/operations.md, "Postgres behind a transaction pooler").',
      ],
    });
  });
});
