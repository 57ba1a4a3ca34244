import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

/** `GET /api/v1/devices` a page at a time (issue 27, item 2): keyset cursors, 100 by default. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

/** A user with `count` devices, two to a millisecond of registration; ids grow with the names. */
async function userWithDevices(count: number) {
  const user = await createTestUser(api.db, { devices: 0 });
  await api.sql.query(
    `INSERT INTO devices (id, user_id, name, token_hash, created_at, updated_at)
     SELECT (lpad(to_hex(n), 8, '0') || substr(md5($1), 1, 24))::uuid, $1::uuid, 'device-' || lpad(n::text, 4, '0'), decode(md5($1 || ':' || n), 'hex'),
            timestamptz '2026-01-01' + (n / 2) * interval '1 millisecond', now()
       FROM generate_series(0, $2::int - 1) n`,
    [user.userId, count],
  );
  return user;
}

type DevicePage = { data: { id: string; name: string }[]; next_cursor?: string };

describe('GET /api/v1/devices, paged', () => {
  it('gives 100 devices by default, oldest first, with next_cursor and a Link header to the next page', async () => {
    const { apiKey } = await userWithDevices(150);
    const first = await call(api.app, apiKey, 'GET', '/api/v1/devices');
    const page = first.json() as DevicePage;
    expect(page.data).toHaveLength(100);
    expect(page.data.map((d) => d.name)).toEqual(Array.from({ length: 100 }, (_, n) => `device-${String(n).padStart(4, '0')}`));
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(first.headers.link).toBe(`</api/v1/devices?limit=100&cursor=${page.next_cursor}>; rel="next"`);

    const second = await call(api.app, apiKey, 'GET', `/api/v1/devices?cursor=${page.next_cursor}`);
    const last = second.json() as DevicePage;
    expect(last.data.map((d) => d.name)).toEqual(Array.from({ length: 50 }, (_, n) => `device-${String(n + 100).padStart(4, '0')}`));
    expect({ next: last.next_cursor, link: second.headers.link }).toEqual({ next: undefined, link: undefined });
  });

  it('visits every device exactly once, page after page, however the pages cut devices registered in the same millisecond', async () => {
    const { apiKey } = await userWithDevices(45);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await call(api.app, apiKey, 'GET', `/api/v1/devices?limit=7${cursor ? `&cursor=${cursor}` : ''}`)).json() as DevicePage;
      seen.push(...page.data.map((d) => d.name));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(7);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, n) => `device-${String(n).padStart(4, '0')}`));
  });

  it('refuses a cursor it did not make, and a limit out of 1..500, with 400', async () => {
    const { apiKey } = await userWithDevices(1);
    for (const query of ['cursor=nope', 'limit=0', 'limit=501']) {
      const res = await call(api.app, apiKey, 'GET', `/api/v1/devices?${query}`);
      expect({ query, status: res.statusCode, error: res.json().error }).toEqual({ query, status: 400, error: 'invalid_request' });
    }
  });

  it('the typed client follows the cursors: listDevices gives every device, listDevicesPage one page', async () => {
    const { apiKey } = await userWithDevices(620);
    const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
    const client = new SmsgwClient(address, apiKey);
    const all = await client.listDevices();
    expect(new Set(all.data.map((d) => d.id)).size).toBe(620);
    const page = await client.listDevicesPage({ limit: 10 });
    expect({ n: page.data.length, next: typeof page.next_cursor }).toEqual({ n: 10, next: 'string' });
  });
});
