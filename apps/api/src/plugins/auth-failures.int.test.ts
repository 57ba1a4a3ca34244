import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.ts';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { enrolPhone, phoneRequest } from '../testing/test-phone.ts';

const LIMIT = 3;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
});
afterAll(async () => {
  await api?.close();
});

let addresses = 0;
/** A client address of its own for each test: failures are counted per address. */
const nextAddress = () => `10.99.${(++addresses >> 8) & 255}.${addresses & 255}`;

const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };

function listSms(app: FastifyInstance, remoteAddress: string, headers: Record<string, string>) {
  return app.inject({ method: 'GET', url: '/api/v1/sms', remoteAddress, headers });
}

function wrongKey(): Record<string, string> {
  return { 'x-api-key': `smsgw_sk_${randomBytes(32).toString('base64url')}` };
}

/** A well-formed JWT that the service never issued. */
function forgedJwt(): string {
  const head = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: randomUUID(), key_id: randomUUID(), exp: 9e9 })).toString('base64url')}`;
  return `${head}.${createHmac('sha256', randomBytes(32)).update(head).digest('base64url')}`;
}

function expectLocked(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({
    status: 429,
    body: { error: 'rate_limited', message: expect.stringMatching(/^Too many failed authentications from this address: retry in \d+ s\.$/) },
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('failed authentication is throttled per client address', () => {
  it('answers 401 to the first AUTH_FAILURES_PER_MINUTE refusals, then 429 with Retry-After; valid keys of the same address are served', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const attacker = nextAddress();
    for (let i = 0; i < LIMIT; i++) {
      const res = await listSms(api.app, attacker, wrongKey());
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
    expectLocked(await listSms(api.app, attacker, wrongKey()));
    // Phones behind one carrier NAT share an address: one with a revoked token locks no other out.
    expect((await listSms(api.app, attacker, { 'x-api-key': apiKey })).statusCode).toBe(200);
    expectLocked(await listSms(api.app, attacker, {}));
    expect((await listSms(api.app, nextAddress(), wrongKey())).statusCode).toBe(401);
  });

  it('counts requests without credentials and forged JWTs, but never accepted requests', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const address = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await listSms(api.app, address, { 'x-api-key': apiKey })).statusCode);
    statuses.push((await listSms(api.app, address, {})).statusCode);
    statuses.push((await listSms(api.app, address, { authorization: `Bearer ${forgedJwt()}` })).statusCode);
    statuses.push((await listSms(api.app, address, wrongKey())).statusCode);
    statuses.push((await listSms(api.app, address, { 'x-api-key': apiKey })).statusCode);
    statuses.push((await listSms(api.app, address, wrongKey())).statusCode);
    expect(statuses).toEqual([...Array(10).fill(200), 401, 401, 401, 200, 429]);
  });

  it('counts refused device tokens on the device protocol', async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const address = nextAddress();
    const heartbeat = (token: string) =>
      api.app.inject({ method: 'POST', url: '/api/v1/device/heartbeat', remoteAddress: address, headers: { authorization: `Bearer ${token}` } });
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await heartbeat(`smsgw_dt_${randomBytes(32).toString('base64url')}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401]);
    expectLocked(await heartbeat(`smsgw_dt_${randomBytes(32).toString('base64url')}`));
    expect((await heartbeat(devices[0]!.token)).statusCode).toBe(200);
  });

  it("counts refused phone tokens on the SMS Gate mobile API, a user's API key among them", async () => {
    const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, userId);
    const address = nextAddress();
    const messages = (token: string) => phoneRequest(api.app, 'GET', '/mobile/v1/message', { authorization: `Bearer ${token}`, remoteAddress: address });
    const statuses: number[] = [];
    for (const token of [`smsgw_dt_${randomBytes(32).toString('base64url')}`, apiKey, 'garbage']) statuses.push((await messages(token)).statusCode);
    expect(statuses).toEqual([401, 401, 401]);
    expectLocked(await messages(apiKey));
    expect((await messages(phone.token)).statusCode).toBe(200);
  });

  it('shares the count between API processes through Redis', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const second = await buildApp({ config: api.config, logger: false });
    try {
      const address = nextAddress();
      const statuses = [
        (await listSms(api.app, address, wrongKey())).statusCode,
        (await listSms(second, address, wrongKey())).statusCode,
        (await listSms(api.app, address, wrongKey())).statusCode,
      ];
      expect(statuses).toEqual([401, 401, 401]);
      expectLocked(await listSms(second, address, wrongKey()));
      expect((await listSms(second, address, { 'x-api-key': apiKey })).statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('counts an IPv6 client per /64, its share of addresses', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    for (let i = 1; i <= LIMIT; i++) expect((await listSms(api.app, `${prefix}::${i}`, wrongKey())).statusCode).toBe(401);
    expectLocked(await listSms(api.app, `${prefix}::ffff`, wrongKey()));
    expect((await listSms(api.app, `${prefix}::ffff`, { 'x-api-key': apiKey })).statusCode).toBe(200);
  });
});
