import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../../app.ts';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { newerClient, publishedClient } from '../../../testing/sms-gate-client.ts';
import { enrolPhone, openPhoneStream, phoneRequest, type PhoneStream } from '../../../testing/test-phone.ts';

/**
 * `/3rdparty/v1/settings` against a listening smsgw, with SMS Gate's published library and raw
 * requests as the newer clients send them: what is stored, what every refusal leaves unchanged,
 * and what the user's phones are fed and told.
 */
let api: TestApi;
let baseUrl: string;
const streams: PhoneStream[] = [];
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await api?.close();
});

const KEY = /^[0-9a-f]{32}$/;
const client = (u: TestUser) => publishedClient(baseUrl, u.user.name, u.apiKey);
/** A settings request as client-go sends it (JSON body, Bearer); status and body. */
async function raw(u: TestUser | string, method: 'GET' | 'PUT' | 'PATCH', body?: unknown) {
  const token = typeof u === 'string' ? u : u.apiKey;
  const res = await fetch(`${baseUrl}/3rdparty/v1/settings`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, Record<string, unknown>> };
}
const phoneSettings = async (token: string, version = '1.68.0') =>
  (
    await phoneRequest(api.app, 'GET', '/mobile/v1/settings', {
      authorization: `Bearer ${token}`,
      headers: { 'user-agent': `me.capcom.smsgateway/${version}` },
    })
  ).json();

describe('GET/PUT/PATCH /3rdparty/v1/settings', () => {
  it('answers a new account its random signing key, replaces with PUT and merges with PATCH, through the published library', async () => {
    const u = await createTestUser(api.db);
    const first = await client(u).getSettings();
    expect(first).toEqual({ webhooks: { signing_key: expect.stringMatching(KEY) } });
    const key = (first.webhooks as Record<string, string>).signing_key;

    // PUT replaces everything but the key, which stays when the body names none; unknown keys are dropped as upstream drops them.
    const put = await client(u).updateSettings({
      messages: { limit_period: 'PerMinute', limit_value: 20, send_interval_min: 1, send_interval_max: 3, sim_selection_mode: 'RoundRobin', unknown: 1 },
      ping: { interval_seconds: 600 },
      gateway: { notification_channel: 'AUTO' },
      extra: { a: 1 },
    } as never);
    const replaced = {
      messages: { limit_period: 'PerMinute', limit_value: 20, send_interval_min: 1, send_interval_max: 3, sim_selection_mode: 'RoundRobin' },
      ping: { interval_seconds: 600 },
      gateway: { notification_channel: 'AUTO' },
      webhooks: { signing_key: key },
    };
    expect(put).toEqual(replaced);
    expect(await client(u).getSettings()).toEqual(replaced);

    // PATCH merges field by field; client-ts's camelCase spelling is read as the snake_case field; null clears.
    const patched = await client(u).patchSettings({
      messages: { limitValue: 5, processing_order: 'FIFO', send_interval_max: null },
      webhooks: { signingKey: 'my-own-key' },
    } as never);
    const merged = {
      messages: { limit_period: 'PerMinute', limit_value: 5, send_interval_min: 1, sim_selection_mode: 'RoundRobin', processing_order: 'FIFO' },
      ping: { interval_seconds: 600 },
      gateway: { notification_channel: 'AUTO' },
      webhooks: { signing_key: 'my-own-key' },
    };
    expect(patched).toEqual(merged);
    expect(await raw(u, 'GET')).toEqual({ status: 200, body: merged });

    // A PUT of nothing keeps only the key; another user's settings are their own.
    expect(await raw(u, 'PUT', {})).toEqual({ status: 200, body: { webhooks: { signing_key: 'my-own-key' } } });
    const other = await createTestUser(api.db);
    expect((await raw(other, 'GET')).body.webhooks!.signing_key).toMatch(KEY);
  });

  it('refuses what upstream refuses, and what a phone would misread, with 400 {message}, changing nothing', async () => {
    const u = await createTestUser(api.db);
    const start = { messages: { send_interval_min: 5, send_interval_max: 10 }, webhooks: { signing_key: 'kept' } };
    expect((await raw(u, 'PUT', start)).status).toBe(200);
    const bad: [string, 'PUT' | 'PATCH', unknown, RegExp][] = [
      ['an unknown limit period', 'PATCH', { messages: { limit_period: 'PerWeek' } }, /messages\.limit_period/],
      ['a limit of 0', 'PUT', { messages: { limit_value: 0 } }, /messages\.limit_value/],
      ['a number as text', 'PATCH', { messages: { limit_value: '10' } }, /messages\.limit_value/],
      ['a fraction', 'PATCH', { ping: { interval_seconds: 1.5 } }, /ping\.interval_seconds/],
      ['an unknown SIM mode', 'PATCH', { messages: { sim_selection_mode: 'First' } }, /messages\.sim_selection_mode/],
      ['an unknown order', 'PATCH', { messages: { processing_order: 'random' } }, /messages\.processing_order/],
      ['an unknown channel', 'PATCH', { gateway: { notification_channel: 'FCM' } }, /gateway\.notification_channel/],
      ['work hours not HH:mm', 'PATCH', { messages: { work_hours_start: '9:00' } }, /messages\.work_hours_start/],
      ['work hours past 23:59', 'PATCH', { messages: { work_hours_end: '24:00' } }, /messages\.work_hours_end/],
      ['a module that is not an object', 'PUT', { messages: 5 }, /messages/],
      ['a body that is not an object', 'PUT', [1], /body/],
      ['an empty signing key', 'PATCH', { webhooks: { signing_key: '' } }, /webhooks\.signing_key/],
      ['both spellings of the key', 'PATCH', { webhooks: { signing_key: 'a', signingKey: 'b' } }, /webhooks\.signing_key is given twice/],
      ['a passphrase', 'PATCH', { encryption: { passphrase: 'secret' } }, /encryption\.passphrase must not be set/],
      ["another server's address", 'PATCH', { gateway: { cloud_url: 'https://example.com' } }, /gateway\.cloud_url must not be set/],
      [
        'a minimum interval above the maximum',
        'PUT',
        { messages: { send_interval_min: 9, send_interval_max: 3 } },
        /send_interval_max must be greater than or equal to/,
      ],
      ['a minimum above the stored maximum', 'PATCH', { messages: { send_interval_min: 11 } }, /send_interval_max must be greater than or equal to/],
      ['a body that is not JSON', 'PATCH', '{', /JSON/],
    ];
    for (const [, method, body, message] of bad) {
      const res = await raw(u, method, body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(res.body.message).toMatch(message);
    }
    expect((await raw(u, 'GET')).body).toEqual(start);
  });

  it('holds a token to settings:read and settings:write', async () => {
    const u = await createTestUser(api.db);
    const tokens = newerClient(baseUrl, '', u.apiKey);
    const { access_token: reader } = await tokens.generateToken({ scopes: ['settings:read'] });
    const { access_token: sender } = await tokens.generateToken({ scopes: ['messages:send'] });
    expect((await raw(reader, 'GET')).status).toBe(200);
    expect(await raw(reader, 'PATCH', { ping: { interval_seconds: 30 } })).toEqual({ status: 403, body: { message: 'scope required: settings:write' } });
    expect(await raw(reader, 'PUT', '{')).toEqual({ status: 403, body: { message: 'scope required: settings:write' } });
    expect(await raw(sender, 'GET')).toEqual({ status: 403, body: { message: 'scope required: settings:read' } });
    expect((await raw(u, 'GET')).body.ping).toBeUndefined();
  });
});

describe('what the phones get', () => {
  it("feeds what applies to the phone, smsgw's own values winning, and never the account's key", async () => {
    const u = await createTestUser(api.db, { devices: 0 });
    const phone = await enrolPhone(api.app, api.db, u.userId);
    const own = await phoneSettings(phone.token);
    const account = {
      messages: {
        limit_period: 'Per30Minutes',
        limit_value: 7,
        send_interval_min: 2,
        send_interval_max: 4,
        sim_selection_mode: 'Random',
        processing_order: 'FIFO',
        work_hours_enabled: true,
        work_hours_start: '08:00',
        work_hours_end: '20:30',
      },
      ping: { interval_seconds: 3600 },
      logs: { lifetime_days: 3 },
      gateway: { notification_channel: 'AUTO' },
      webhooks: { signing_key: 'account-key', retry_count: 2, internet_required: false },
    };
    expect((await raw(u, 'PUT', account)).status).toBe(200);

    // The enrolling app is 1.68: it knows Per30Minutes. smsgw's ping (60 s) is shorter than the account's.
    expect(await phoneSettings(phone.token)).toEqual({
      gateway: { notification_channel: 'SSE_ONLY' },
      webhooks: { signing_key: own.webhooks.signing_key },
      ping: { interval_seconds: 60 },
      messages: account.messages,
      logs: { lifetime_days: 3 },
    });
    // A shorter ping than smsgw's is the account's; an app before 1.67 gets Per30Minutes as the stricter PerHour.
    await raw(u, 'PATCH', { ping: { interval_seconds: 20 } });
    expect(await phoneSettings(phone.token, '1.60.0')).toMatchObject({ ping: { interval_seconds: 20 }, messages: { limit_period: 'PerHour', limit_value: 7 } });
    // smsgw's rate limit of the device, which its dispatcher enforces, replaces the account's limit.
    await api.db.device.update({ where: { id: phone.id }, data: { rateLimitPerHour: 100, rateLimitPerDay: 500 } });
    expect((await phoneSettings(phone.token)).messages).toEqual({ ...account.messages, limit_period: 'PerHour', limit_value: 100 });
  });

  it("tells the user's phones SettingsUpdated on every change, on streams held by another API process too", async () => {
    const u = await createTestUser(api.db, { devices: 0 });
    const [phone, second] = [await enrolPhone(api.app, api.db, u.userId), await enrolPhone(api.app, api.db, u.userId)];
    const stranger = await enrolPhone(api.app, api.db, (await createTestUser(api.db, { devices: 0 })).userId);
    // Another API process on the same database and Redis prefix.
    const other = await buildApp({ config: api.config, logger: false });
    try {
      await other.listen({ host: '127.0.0.1', port: 0 });
      const otherUrl = `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`;
      const [here, there, theirs] = await Promise.all([
        openPhoneStream(`${baseUrl}/mobile/v1/events`, phone.token),
        openPhoneStream(`${otherUrl}/mobile/v1/events`, second.token),
        openPhoneStream(`${baseUrl}/mobile/v1/events`, stranger.token),
      ]);
      streams.push(here, there, theirs);
      const told = (s: PhoneStream) => s.events.filter((e) => e.event === 'SettingsUpdated').length;
      // Each opens with its greeting's SettingsUpdated.
      await vi.waitFor(() => expect([here, there, theirs].map(told)).toEqual([1, 1, 1]), { timeout: 5_000 });

      await client(u).patchSettings({ messages: { limit_period: 'PerHour', limit_value: 30 } } as never);
      await vi.waitFor(() => expect([here, there].map(told)).toEqual([2, 2]), { timeout: 5_000 });
      expect(here.events.at(-1)).toEqual({ event: 'SettingsUpdated', data: 'null', id: undefined });
      // The phone fetches again and gets the new limit.
      expect((await phoneSettings(second.token)).messages).toEqual({ limit_period: 'PerHour', limit_value: 30 });

      // A refused change tells nobody; another user's phone is never told.
      expect((await raw(u, 'PATCH', { messages: { limit_value: 0 } })).status).toBe(400);
      await client(u).updateSettings({} as never);
      await vi.waitFor(() => expect([here, there].map(told)).toEqual([3, 3]), { timeout: 5_000 });
      expect(told(theirs)).toBe(1);

      // A change of smsgw's rate limit of the phone, which its settings carry, tells that phone alone.
      const limit = await fetch(`${baseUrl}/api/v1/devices/${phone.id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': u.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ rate_limit_per_minute: 6 }),
      });
      expect(limit.status).toBe(200);
      await vi.waitFor(() => expect(told(here)).toBe(4), { timeout: 5_000 });
      expect((await phoneSettings(phone.token)).messages).toEqual({ limit_period: 'PerMinute', limit_value: 6 });
      expect(told(there)).toBe(3);
    } finally {
      await Promise.all(streams.splice(0).map((s) => s.close()));
      await other.close();
    }
  });
});
