import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice } from '@smsgw/db';
import { sentIds } from '../support/cluster.ts';
import { openE2e, type E2e } from '../support/e2e-fixture.ts';
import { startHosts, type Hosts } from './support/hosts.ts';
import { sendRoundTrips } from './support/round-trips.ts';

const DEVICES = 3;

/**
 * Issue 28, "Several hosts": two APIs and two dispatchers as if on two other hosts (network
 * namespaces, 1 ms each way to Postgres and Redis), the devices on host a's API and the sends
 * arriving at host b's. `./pnpmw bench:hosts` measures the same set-up's speed against loopback.
 */
describe('two hosts, 1 ms each way to Postgres and Redis', () => {
  let e2e: E2e;
  let hosts: Hosts;
  let client: SmsgwClient;

  beforeAll(async () => {
    e2e = await openE2e('hosts');
    const { user, key } = await e2e.user('hosts');
    const tokens: string[] = [];
    for (let i = 0; i < DEVICES; i++) tokens.push((await createDevice(e2e.db, { userId: user.id, name: `phone-${i}` })).token);
    hosts = await startHosts({
      databaseUrl: e2e.database.url,
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      queuePrefix: `smsgw-hosts-${randomBytes(4).toString('hex')}`,
      logDir: e2e.logDir,
      deviceTokens: tokens,
      delayMs: 1,
      simEnv: { SIM_SEND_MS: '0', SIM_DELIVER_MS: '0' },
    });
    e2e.defer(() => hosts.stop());
    client = new SmsgwClient(hosts.apiUrl.b, key);
  });
  afterAll(() => e2e?.close());

  it('delivers every message once: sent to host b, handed to devices held by host a', async () => {
    const answers = await Promise.all([
      ...[0, 1, 2].map((batch) =>
        client.send({ recipients: Array.from({ length: 100 }, (_, i) => `+1555100${batch}${String(i).padStart(3, '0')}`), body: `bulk ${batch}` }),
      ),
      ...Array.from({ length: 20 }, (_, i) => client.send({ recipients: [`+1555200${String(i).padStart(4, '0')}`], body: `single ${i}` })),
    ]);
    const ids = answers.flatMap((answer) => answer.message_ids);
    expect(ids).toHaveLength(320);
    await expect.poll(async () => (await sentIds(e2e.logDir)).length, { timeout: 60_000, interval: 200 }).toBeGreaterThanOrEqual(ids.length);
    const sent = await sentIds(e2e.logDir);
    expect(new Set(sent).size).toBe(sent.length);
    expect(new Set(sent)).toEqual(new Set(ids));
    await expect.poll(async () => (await client.listMessages({ status: 'delivered', limit: 1 })).total, { timeout: 30_000, interval: 200 }).toBe(ids.length);
    for (const name of ['api-a', 'api-b', 'dispatcher-a', 'dispatcher-b'])
      expect(hosts.output(name).filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
  });

  it('makes at most 2 round trips to Postgres and 2 to Redis for a one-recipient send', async () => {
    const trips = await sendRoundTrips(hosts.links.get('api-b')!, async (i) => {
      await client.send({ recipients: [`+1555300${String(i).padStart(4, '0')}`], body: `counted ${i}` });
    });
    expect(trips.postgres).toBeLessThanOrEqual(2);
    expect(trips.redis).toBeLessThanOrEqual(2);
  });
});
