import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const HOUR = 3_600_000;

describe('GET /api/v1/sms/stats', () => {
  it('counts the user’s messages by status per hour, zeros included, and per device', async () => {
    const user = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const ids = (await send(api.app, user.apiKey, { recipients: [uniquePhone(), uniquePhone(), uniquePhone()], body: 'hi' })).json().message_ids as string[];
    await send(api.app, other.apiKey, { recipients: [uniquePhone()], body: 'not mine' });
    // One delivered an hour ago, one failed three hours ago, one older than the range.
    const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * HOUR);
    await api.sql.query("UPDATE messages SET state = 'delivered', device_id = $2, created_at = $3 WHERE id = $1", [ids[0], user.deviceId, at(1)]);
    await api.sql.query("UPDATE messages SET state = 'failed', created_at = $2 WHERE id = $1", [ids[1], at(3)]);
    await api.sql.query('UPDATE messages SET created_at = $2 WHERE id = $1', [ids[2], at(30)]);

    const res = await call(api.app, user.apiKey, 'GET', '/api/v1/sms/stats?hours=24');
    expect(res.statusCode).toBe(200);
    const body = res.json() as { since: string; hours: { hour: string; counts: Record<string, number> }[]; devices: { device_id: string; messages: number }[] };
    expect(body.hours).toHaveLength(24);
    expect(body.hours[0]!.hour).toBe(body.since);
    const total = (status: string) => body.hours.reduce((n, h) => n + h.counts[status]!, 0);
    expect([total('queued'), total('sending'), total('sent'), total('delivered'), total('failed')]).toEqual([0, 0, 0, 1, 1]);
    const hourOf = (date: Date) => new Date(Math.floor(date.getTime() / HOUR) * HOUR).toISOString();
    expect(body.hours.find((h) => h.hour === hourOf(at(1)))!.counts.delivered).toBe(1);
    expect(body.devices).toEqual([{ device_id: user.deviceId, messages: 1 }]);
  });

  it('refuses hours out of range with a JSON 400, and a caller without credentials with 401', async () => {
    const user = await createTestUser(api.db);
    for (const hours of ['0', '169', 'x']) {
      const res = await call(api.app, user.apiKey, 'GET', `/api/v1/sms/stats?hours=${hours}`);
      expect(res.statusCode, hours).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/sms/stats' })).statusCode).toBe(401);
  });
});

describe('GET /api/v1/sms/:id/history', () => {
  it('lists the states of the message oldest first, its creation first', async () => {
    const user = await createTestUser(api.db);
    const [id] = (await send(api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' })).json().message_ids as string[];
    const later = new Date(Date.now() + 1000);
    await api.sql.query("INSERT INTO message_events (message_id, state, device_id, at, detail) VALUES ($1, 'failed', NULL, $2, 'no luck')", [id, later]);
    const res = await call(api.app, user.apiKey, 'GET', `/api/v1/sms/${id}/history`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { state: 'pending', status: 'queued', at: expect.any(String), device_id: null, detail: null },
      { state: 'failed', status: 'failed', at: later.toISOString(), device_id: null, detail: 'no luck' },
    ]);
  });

  it('answers 404 for another user’s message and for an id that is no uuid', async () => {
    const owner = await createTestUser(api.db);
    const stranger = await createTestUser(api.db);
    const [id] = (await send(api.app, owner.apiKey, { recipients: [uniquePhone()], body: 'hi' })).json().message_ids as string[];
    for (const path of [id, 'not-a-uuid']) {
      const res = await call(api.app, stranger.apiKey, 'GET', `/api/v1/sms/${path}/history`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found' });
    }
  });
});
