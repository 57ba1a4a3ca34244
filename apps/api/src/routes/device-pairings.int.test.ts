import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPairedPhone } from '@smsgw/db';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

const TTL_SECONDS = 420;
let api: TestApi;
beforeAll(async () => {
  // A trailing slash in PUBLIC_URL must not give `//mobile/v1`.
  api = await startTestApi({ PUBLIC_URL: 'https://sms.example.org/', PAIRING_TTL_SECONDS: String(TTL_SECONDS) });
});
afterAll(async () => {
  await api?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };
const sha256 = (text: string) => createHash('sha256').update(text).digest();

interface NewPairing {
  code: string;
  token: string;
  expires_at: string;
  mobile_url: string;
}

async function pair(apiKey: string, body: unknown = {}): Promise<NewPairing> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/device-pairings', body);
  expect(res.statusCode).toBe(201);
  return res.json();
}

const phone = { name: 'Pixel 8', appVersion: '1.68.0', pushToken: false, simCards: null };

describe('POST /api/v1/device-pairings', () => {
  it('answers 201 with an 8-digit code, a smsgw_pt_ token, the expiry PAIRING_TTL_SECONDS ahead and the mobile URL of PUBLIC_URL', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const before = Date.now();
    const res = await call(api.app, apiKey, 'POST', '/api/v1/device-pairings', {});
    const after = Date.now();

    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const pairing = res.json();
    expect(pairing).toEqual({
      code: expect.stringMatching(/^\d{8}$/),
      token: expect.stringMatching(/^smsgw_pt_[A-Za-z0-9_-]{22,}$/),
      expires_at: expect.stringMatching(ISO_MS),
      mobile_url: 'https://sms.example.org/mobile/v1',
      steps: expect.any(Array),
    });
    // The same steps as the CLI and ./pnpmw start print, with this pairing's code, token and URL.
    expect(pairing.steps).toHaveLength(6);
    expect(pairing.steps[0]).toContain('app-release.apk');
    expect(pairing.steps.join('\n')).toContain(pairing.code);
    expect(pairing.steps.join('\n')).toContain(pairing.token);
    expect(pairing.steps.join('\n')).toContain('https://sms.example.org/mobile/v1');
    const expires = Date.parse(pairing.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + TTL_SECONDS * 1000);
    expect(expires).toBeLessThanOrEqual(after + TTL_SECONDS * 1000);
  });

  it('gives a new code and token on every call', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const [a, b] = [await pair(apiKey), await pair(apiKey)];
    expect(a.code).not.toBe(b.code);
    expect(a.token).not.toBe(b.token);
  });

  it('stores only the SHA-256 of the code and the token: neither secret is in the row', async () => {
    const { apiKey, userId } = await createTestUser(api.db, { devices: 0 });
    const { code, token, expires_at } = await pair(apiKey, { name: 'Shop phone' });

    const rows = await api.db.devicePairing.findMany({ where: { userId } });
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect({ name: row.name, expiresAt: row.expiresAt.toISOString(), usedAt: row.usedAt, deviceId: row.deviceId }).toEqual({
      name: 'Shop phone',
      expiresAt: expires_at,
      usedAt: null,
      deviceId: null,
    });
    expect(Buffer.from(row.codeHash).equals(sha256(code))).toBe(true);
    expect(Buffer.from(row.tokenHash).equals(sha256(token))).toBe(true);
    const { rows: raw } = await api.sql.query<{ row: string }>('SELECT row_to_json(p)::text AS row FROM device_pairings p WHERE user_id = $1', [userId]);
    expect(raw[0]!.row).not.toContain(code);
    expect(raw[0]!.row).not.toContain(token);
    expect(raw[0]!.row).not.toContain(token.slice('smsgw_pt_'.length));
  });

  it('enrols one phone of the caller with the code, under the pairing’s name, and is then spent', async () => {
    const { apiKey, userId } = await createTestUser(api.db, { devices: 0 });
    const { code, token } = await pair(apiKey, { name: 'Shop phone' });

    const registered = await registerPairedPhone(api.db, code, phone);
    expect(registered).toEqual({ id: expect.any(String), userId, token: expect.stringMatching(/^smsgw_dt_/) });
    const device = await api.db.device.findUniqueOrThrow({ where: { id: registered!.id } });
    expect({ name: device.name, protocol: device.protocol }).toEqual({ name: 'Shop phone', protocol: 'sms_gate' });
    expect(await registerPairedPhone(api.db, token, phone)).toBeNull();
  });

  it('accepts a request with no body at all as {}', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/device-pairings', headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(201);
    expect(res.json().code).toMatch(/^\d{8}$/);
  });

  it.each([
    ['an unknown field', { name: 'x', label: 'y' }, "Unknown field 'label'."],
    ['an empty name', { name: '' }, undefined],
    ['a name that is not a string', { name: 5 }, undefined],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, undefined],
    ['a body that is not an object', [], undefined],
  ])('refuses %s with 400 invalid_request, creating nothing', async (_what, body, message) => {
    const { apiKey, userId } = await createTestUser(api.db, { devices: 0 });
    const res = await call(api.app, apiKey, 'POST', '/api/v1/device-pairings', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: message ?? expect.any(String) });
    expect(await api.db.devicePairing.count({ where: { userId } })).toBe(0);
  });

  it('answers 401 without credentials, with a wrong key and with a device token', async () => {
    const { devices } = await createTestUser(api.db);
    const attempts = [{}, { 'x-api-key': 'smsgw_sk_nonsense' }, { authorization: `Bearer ${devices[0]!.token}` }];
    for (const headers of attempts) {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/device-pairings', headers, payload: {} });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
  });
});

describe('mobile_url without PUBLIC_URL', () => {
  it('is http://HOST:PORT/mobile/v1', async () => {
    const local = await startTestApi({ HOST: '0.0.0.0', PORT: '3456' });
    try {
      const { apiKey } = await createTestUser(local.db, { devices: 0 });
      const res = await call(local.app, apiKey, 'POST', '/api/v1/device-pairings', {});
      expect(res.statusCode).toBe(201);
      expect(res.json().mobile_url).toBe('http://127.0.0.1:3456/mobile/v1');
    } finally {
      await local.close();
    }
  });
});
