import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPairing } from '@smsgw/db';
import { createTestUser, startTestApi, type TestApi } from '../../../testing/test-api.ts';
import { nextAddress, phoneRequest } from '../../../testing/test-phone.ts';

/** The registration limits (docs/decisions.md, "Registration limits"): per address and per pairing, both configurable. */
let limited: TestApi;
let defaults: TestApi;

beforeAll(async () => {
  [limited, defaults] = await Promise.all([
    startTestApi({ REGISTRATIONS_PER_MINUTE_PER_ADDRESS: '10', REGISTRATIONS_PER_MINUTE_PER_PAIRING: '3' }),
    startTestApi(),
  ]);
});
afterAll(async () => {
  await Promise.all([limited?.close(), defaults?.close()]);
});

function register(api: TestApi, secret: string, remoteAddress: string) {
  return phoneRequest(api.app, 'POST', '/mobile/v1/device', { authorization: `Code ${secret}`, body: { name: 'x/y' }, remoteAddress });
}

function expectRateLimited(res: Awaited<ReturnType<typeof register>>) {
  expect({ status: res.statusCode, body: res.json(), retryAfter: Number(res.headers['retry-after']) }).toEqual({
    status: 429,
    body: { error: 'rate_limited', message: expect.any(String) },
    retryAfter: expect.any(Number),
  });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('POST /device registration limits', () => {
  it('limits registrations per address (REGISTRATIONS_PER_MINUTE_PER_ADDRESS): the 11th of 10 in a minute gets 429, another address is still served', async () => {
    const address = nextAddress();
    for (let i = 0; i < 10; i++) expect((await register(limited, String(20_000_000 + i), address)).statusCode).toBe(401);

    expectRateLimited(await register(limited, '20000010', address));
    expect((await register(limited, '20000011', nextAddress())).statusCode).toBe(401);
  });

  it('limits registrations per pairing code (REGISTRATIONS_PER_MINUTE_PER_PAIRING), whatever the address: the 4th of 3 gets 429, another code is still served', async () => {
    for (let i = 0; i < 3; i++) expect((await register(limited, '30000000', nextAddress())).statusCode).toBe(401);

    expectRateLimited(await register(limited, '30000000', nextAddress()));
    expect((await register(limited, '30000001', nextAddress())).statusCode).toBe(401);
  });

  it('enrols a fleet behind one NAT with the defaults: 40 phones from one address, one pairing each, all registered', async () => {
    const { userId } = await createTestUser(defaults.db, { devices: 0 });
    const address = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const { code } = await createPairing(defaults.db, { userId, ttlSeconds: 600 });
      statuses.push((await register(defaults, code, address)).statusCode);
    }
    expect(statuses).toEqual(Array(40).fill(201));
    expect(await defaults.db.device.count({ where: { userId } })).toBe(40);
  });
});
