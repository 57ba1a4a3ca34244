import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assignDevices } from '@smsgw/assign';
import { wakeupChannel } from '@smsgw/queue';
import { announceDeps } from '../../services/send-deps.ts';
import { call, createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../../testing/test-api.ts';

/**
 * Issue 27, item 3: a send due now is assigned in the request when a device can take it (the
 * dispatcher's planner, reservations and compare-and-set), and gets no dispatch job; what must wait
 * is left to its job, as before.
 */
let api: TestApi;
let subscriber: Redis;
const woken: string[] = [];
beforeAll(async () => {
  api = await startTestApi({ SEND_ASSIGN_MIN_RECIPIENTS: '1' });
  subscriber = new Redis(api.config.REDIS_URL);
  subscriber.on('message', (_channel: string, deviceId: string) => woken.push(deviceId));
  await subscriber.subscribe(wakeupChannel(api.config.QUEUE_PREFIX));
});
afterAll(async () => {
  subscriber?.disconnect();
  await api?.close();
});

/** The ids of a send, once its assignment (which goes on after the answer) has ended. */
async function sendTo(apiKey: string, count: number, extra: object = {}): Promise<string[]> {
  const res = await send(api.app, apiKey, { recipients: Array.from({ length: count }, uniquePhone), body: 'now', ...extra });
  expect(res.statusCode).toBe(200);
  await api.app.background.settled();
  return res.json().message_ids as string[];
}

async function rows(ids: string[]) {
  const { rows } = await api.sql.query<{ id: string; state: string; device_id: string | null }>(
    'SELECT id, state, device_id FROM messages WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return ids.map((id) => rows.find((r) => r.id === id)!);
}

const jobOf = (id: string) => api.queue.getJob(id);

describe('the assignment in the send', () => {
  it('assigns a send due now to the free devices round-robin, wakes each once, and enqueues no dispatch job', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const ids = await sendTo(apiKey, 4);

    const stored = await rows(ids);
    expect(stored.map((r) => r.state)).toEqual(['assigned', 'assigned', 'assigned', 'assigned']);
    const ours = devices.map((d) => d.id);
    for (const device of ours) expect(stored.filter((r) => r.device_id === device)).toHaveLength(2);
    for (const id of ids) expect(await jobOf(id)).toBeUndefined();
    await vi.waitFor(() => expect(woken.filter((d) => ours.includes(d)).sort()).toEqual([...ours].sort()));
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms/${ids[0]}`)).json()).toMatchObject({ state: 'assigned', status: 'queued' });

    // A dispatch job for one of them (the outbox sweep's, a retry) finds it no longer pending.
    const deps = { sql: api.sql, redis: api.app.redis, announce: announceDeps(api.app), config: api.config, log: pino({ level: 'silent' }) };
    expect(await assignDevices(deps, ids)).toEqual(ids.map(() => 'not_pending'));
    expect((await rows(ids)).map((r) => r.device_id)).toEqual(stored.map((r) => r.device_id));
  });

  it('answers before its assignment ends, which goes on after the answer', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 1 });
    const query = api.app.sql.query.bind(api.app.sql) as (text: string, values?: unknown[]) => Promise<unknown>;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The assignment's compare-and-set waits until the test lets it go.
    const held = vi.spyOn(api.app.sql, 'query').mockImplementation((async (text: string, values?: unknown[]) => {
      if (typeof text === 'string' && text.includes('AS t(id, device_id, sim_number)')) await gate;
      return query(text, values);
    }) as never);
    try {
      const res = await send(api.app, apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'now' });
      expect(res.statusCode).toBe(200);
      const ids = res.json().message_ids as string[];
      expect((await rows(ids)).map((r) => r.state)).toEqual(['pending', 'pending']);
      expect(api.app.background.size).toBe(1);
      release();
      await api.app.background.settled();
      expect((await rows(ids)).map((r) => r.state)).toEqual(['assigned', 'assigned']);
      for (const id of ids) expect(await jobOf(id)).toBeUndefined();
    } finally {
      release();
      held.mockRestore();
    }
  });

  it('leaves to the dispatch job what a paced device cannot take now', async () => {
    const { apiKey, deviceId } = await createTestUser(api.db);
    expect((await call(api.app, apiKey, 'PATCH', `/api/v1/devices/${deviceId}`, { rate_limit_per_minute: 2 })).statusCode).toBe(200);
    const ids = await sendTo(apiKey, 3);

    expect((await rows(ids)).map((r) => r.state)).toEqual(['assigned', 'assigned', 'pending']);
    expect(await jobOf(ids[0]!)).toBeUndefined();
    expect(await jobOf(ids[2]!)).toBeDefined();
  });

  it('leaves a scheduled send to its delayed dispatch job', async () => {
    const { apiKey } = await createTestUser(api.db);
    const [id] = await sendTo(apiKey, 1, { send_at: new Date(Date.now() + 3_600_000).toISOString() });

    expect((await rows([id!]))[0]!.state).toBe('pending');
    expect(await (await jobOf(id!))?.isDelayed()).toBe(true);
  });

  it('leaves a send to the dispatcher when it has fewer messages than SEND_ASSIGN_MIN_RECIPIENTS', async () => {
    const small = await startTestApi({ SEND_ASSIGN_MIN_RECIPIENTS: '3' });
    try {
      const { apiKey } = await createTestUser(small.db);
      const res = await send(small.app, apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'two' });
      const ids = res.json().message_ids as string[];
      const { rows: stored } = await small.sql.query<{ state: string }>('SELECT state FROM messages WHERE id = ANY($1::uuid[])', [ids]);
      expect(stored.map((r) => r.state)).toEqual(['pending', 'pending']);
      for (const id of ids) expect(await small.queue.getJob(id)).toBeDefined();
    } finally {
      await small.close();
    }
  });
});
