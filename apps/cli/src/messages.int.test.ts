import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createTestUser, send, sendFootprint, uniquePhone } from '@smsgw/api/testing';
import { cliOnApi, failure, ok } from './testing/run-cli.ts';

// The CLI against the database and queue of a running API: a send by either must store the same.
const cli = cliOnApi();
const { smsgw, smsgwWith } = cli;

interface Accepted {
  message_ids: string[];
  recipients_count: number;
  status: string;
  batch_id?: string;
}

/** The stored messages of a send, without what differs between two sends (ids, times). */
async function stored(ids: string[]) {
  const rows = await cli.api.db.message.findMany({ where: { id: { in: ids } }, orderBy: { to: 'asc' } });
  return rows.map(({ id: _id, batchId, createdAt: _c, updatedAt: _u, ...row }) => ({ ...row, inBatch: batchId !== null }));
}

describe('smsgw message send', () => {
  it('stores and enqueues exactly what POST /api/sms/send does: messages, batch, quota, one job per recipient', async () => {
    const viaApi = await createTestUser(cli.api.db);
    const viaCli = await createTestUser(cli.api.db);
    const [a, b] = [uniquePhone(), uniquePhone()];
    const text = 'Your code is 1234 ✓';

    const response = await send(cli.api.app, viaApi.apiKey, { recipients: [a, b], body: text });
    expect(response.statusCode).toBe(200);
    const out = ok(await smsgw('message', 'send', '--user', viaCli.user.name, '--to', `${a}, ${b}`, '--text', text)) as unknown as Accepted;

    expect(out).toEqual({ message_ids: [expect.any(String), expect.any(String)], recipients_count: 2, status: 'accepted', batch_id: expect.any(String) });
    const fromApi = response.json() as Accepted;
    const normalise = (rows: Awaited<ReturnType<typeof stored>>) => rows.map((row) => ({ ...row, userId: 'the user' }));
    expect(normalise(await stored(out.message_ids))).toEqual(normalise(await stored(fromApi.message_ids)));
    expect((await stored(out.message_ids)).map((row) => row.to)).toEqual([a, b].sort());

    expect(await sendFootprint(cli.api, viaCli.userId)).toMatchObject({ messages: 2, batches: 1, quotaUsed: 2 });
    for (const id of out.message_ids) {
      const job = await cli.api.queue.getJob(id);
      expect({ name: job?.name, data: job?.data }).toEqual({ name: 'message.dispatch', data: { messageId: id } });
    }
  });

  it('sends through the device given with --device, as device_id does', async () => {
    const { user, deviceId } = await createTestUser(cli.api.db);
    const out = ok(await smsgw('message', 'send', '--user', user.id, '--to', uniquePhone(), '--text', 'hi', '--device', deviceId!)) as unknown as Accepted;
    expect(out).not.toHaveProperty('batch_id');
    const row = await cli.api.db.message.findUniqueOrThrow({ where: { id: out.message_ids[0]! } });
    expect(row.requestedDeviceId).toBe(deviceId);
  });

  it('schedules with --send-at, limits with --ttl and picks the SIM with --sim, as send_at, ttl_seconds and sim_number do', async () => {
    const { user, userId } = await createTestUser(cli.api.db);
    const sendAt = new Date(Date.now() + 3600_000);
    const args = ['--user', user.id, '--to', uniquePhone(), '--text', 'later', '--send-at', sendAt.toISOString(), '--ttl', '60', '--sim', '2'];
    const out = ok(await smsgw('message', 'send', ...args)) as unknown as Accepted;
    const row = await cli.api.db.message.findUniqueOrThrow({ where: { id: out.message_ids[0]! } });
    expect(row).toMatchObject({ sendAt, validUntil: new Date(sendAt.getTime() + 60_000), simNumber: 2, state: 'pending' });
    expect(await (await cli.api.queue.getJob(row.id))?.getState()).toBe('delayed');
    expect((await sendFootprint(cli.api, userId)).quotaUsed).toBe(1);
  });

  it('refuses a past --send-at as the API refuses send_at (exit 2), and --sim 4 or --ttl with --valid-until, storing nothing', async () => {
    const user = await createTestUser(cli.api.db);
    const before = await sendFootprint(cli.api, user.userId);
    const base = ['--user', user.userId, '--to', uniquePhone(), '--text', 'hi'];
    const past = new Date(Date.now() - 60_000).toISOString();
    const api = await send(cli.api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi', send_at: past });
    expect(failure(await smsgw('message', 'send', ...base, '--send-at', past))).toEqual({ code: 2, error: 'invalid_request', message: api.json().message });
    expect(failure(await smsgw('message', 'send', ...base, '--sim', '4'))).toEqual({
      code: 2,
      error: 'usage',
      message: '--sim must be a whole number from 1 to 3',
    });
    const both = ['--valid-until', new Date(Date.now() + 60_000).toISOString(), '--ttl', '30'];
    expect(failure(await smsgw('message', 'send', ...base, ...both))).toMatchObject({ code: 2, error: 'invalid_request' });
    expect(await sendFootprint(cli.api, user.userId)).toEqual(before);
  });

  async function refusedLikeTheApi(
    user: { userId: string; user: { id: string }; apiKey: string },
    body: { recipients: string[]; body: string; device_id?: string },
    expected: { status: number; error: string; exit: number },
  ): Promise<void> {
    const before = await sendFootprint(cli.api, user.userId);
    const response = await send(cli.api.app, user.apiKey, body);
    expect(response.statusCode).toBe(expected.status);
    const args = ['--user', user.user.id, '--to', body.recipients.join(','), '--text', body.body, ...(body.device_id ? ['--device', body.device_id] : [])];
    const refused = failure(await smsgw('message', 'send', ...args));
    expect(refused).toEqual({ code: expected.exit, error: expected.error, message: response.json().message });
    expect(await sendFootprint(cli.api, user.userId)).toEqual(before);
  }

  it('refuses a number that is not E.164 as the API does (400 → exit 2), storing and enqueueing nothing', async () => {
    await refusedLikeTheApi(
      await createTestUser(cli.api.db),
      { recipients: [uniquePhone(), '0612345678'], body: 'hi' },
      { status: 400, error: 'invalid_phone_number', exit: 2 },
    );
  });

  it('refuses a send over the monthly quota (402 → exit 6)', async () => {
    await refusedLikeTheApi(
      await createTestUser(cli.api.db, { monthlyQuota: 1 }),
      { recipients: [uniquePhone(), uniquePhone()], body: 'hi' },
      { status: 402, error: 'quota_exceeded', exit: 6 },
    );
  });

  it('refuses a send when no device is available (503 → exit 6)', async () => {
    await refusedLikeTheApi(
      await createTestUser(cli.api.db, { devices: 0 }),
      { recipients: [uniquePhone()], body: 'hi' },
      { status: 503, error: 'no_devices', exit: 6 },
    );
  });

  it("refuses another user's device (400 device_not_found → exit 2)", async () => {
    const other = await createTestUser(cli.api.db);
    await refusedLikeTheApi(
      await createTestUser(cli.api.db),
      { recipients: [uniquePhone()], body: 'hi', device_id: other.deviceId! },
      { status: 400, error: 'device_not_found', exit: 2 },
    );
  });

  it('refuses a text over 1600 characters (400 invalid_request → exit 2)', async () => {
    const user = await createTestUser(cli.api.db);
    const before = await sendFootprint(cli.api, user.userId);
    const text = '✓'.repeat(1601);
    expect((await send(cli.api.app, user.apiKey, { recipients: [uniquePhone()], body: text })).json()).toMatchObject({ error: 'invalid_request' });
    expect(failure(await smsgw('message', 'send', '--user', user.userId, '--to', uniquePhone(), '--text', text))).toMatchObject({
      code: 2,
      error: 'invalid_request',
    });
    expect(await sendFootprint(cli.api, user.userId)).toEqual(before);
  });

  it('refuses a disabled user (exit 4), as the API refuses its keys', async () => {
    const user = await createTestUser(cli.api.db);
    ok(await smsgw('user', 'disable', '--user', user.userId));
    expect((await send(cli.api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hi' })).statusCode).toBe(401);
    expect(failure(await smsgw('message', 'send', '--user', user.userId, '--to', uniquePhone(), '--text', 'hi'))).toMatchObject({
      code: 4,
      error: 'user_disabled',
    });
    expect((await sendFootprint(cli.api, user.userId)).messages).toBe(0);
  });

  it('exits 5 naming REDIS_URL when Redis cannot be reached, storing nothing', async () => {
    const user = await createTestUser(cli.api.db);
    const refused = failure(
      await smsgwWith({ REDIS_URL: 'redis://127.0.0.1:1' }, 'message', 'send', '--user', user.userId, '--to', uniquePhone(), '--text', 'hi'),
    );
    expect(refused).toMatchObject({ code: 5, error: 'redis_unavailable', message: expect.stringContaining('REDIS_URL') });
    expect((await sendFootprint(cli.api, user.userId)).messages).toBe(0);
  });

  it('exits 2 without --to or --text', async () => {
    const user = await createTestUser(cli.api.db);
    expect(failure(await smsgw('message', 'send', '--user', user.userId, '--text', 'hi'))).toEqual({ code: 2, error: 'usage', message: '--to is required' });
    expect(failure(await smsgw('message', 'send', '--user', user.userId, '--to', uniquePhone()))).toEqual({
      code: 2,
      error: 'usage',
      message: '--text is required',
    });
  });
});

describe('smsgw message list, show', () => {
  it('lists as GET /api/v1/sms does, with its filters and paging, newest first', async () => {
    const user = await createTestUser(cli.api.db);
    const [a, b] = [uniquePhone(), uniquePhone()];
    const batch = (await send(cli.api.app, user.apiKey, { recipients: [a, b], body: 'batch' })).json() as Accepted;
    await send(cli.api.app, user.apiKey, { recipients: [a], body: 'single' });

    const queries: [string[], string][] = [
      [[], ''],
      [['--to', a], `to=${encodeURIComponent(a)}`],
      [['--batch', batch.batch_id!, '--status', 'queued'], `batch_id=${batch.batch_id}&status=queued`],
      [['--device', user.deviceId!], `device_id=${user.deviceId}`],
      [['--limit', '1', '--offset', '1'], 'limit=1&offset=1'],
    ];
    const listed = async (flags: string[], query: string) => {
      const out = ok(await smsgw('message', 'list', '--user', user.userId, ...flags));
      expect(out, query).toEqual((await call(cli.api.app, user.apiKey, 'GET', `/api/v1/sms?${query}`)).json());
      return out as { next_cursor: string | null };
    };
    await Promise.all(queries.map(([flags, query]) => listed(flags, query)));
    const first = await listed(['--limit', '2'], 'limit=2');
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(await listed(['--limit', '2', '--cursor', first.next_cursor!], `limit=2&cursor=${first.next_cursor}`)).toMatchObject({ next_cursor: null });
    expect(failure(await smsgw('message', 'list', '--user', user.userId, '--cursor', first.next_cursor!, '--offset', '1'))).toMatchObject({ code: 2 });
    const all = ok(await smsgw('message', 'list', '--user', user.userId)) as { data: { message: string }[]; total: number };
    expect(all.total).toBe(3);
    expect(all.data[0]!.message).toBe('single');
  }, 60_000); // nine CLI processes

  it.each([
    ['--status', 'lost'],
    ['--to', '0612345678'],
    ['--batch', 'not-a-uuid'],
    ['--device', 'x'],
    ['--limit', '101'],
    ['--offset', 'one'],
    ['--cursor', 'not-one'],
  ])('message list refuses %s %s (exit 2), as the API answers 400', async (flag, value) => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    expect(failure(await smsgw('message', 'list', '--user', user.userId, flag, value))).toMatchObject({
      code: 2,
      error: 'usage',
      message: expect.stringContaining(flag),
    });
  });

  it('shows a message as GET /api/v1/sms/:id does, with the states it went through', async () => {
    const user = await createTestUser(cli.api.db);
    const {
      message_ids: [id],
    } = (await send(cli.api.app, user.apiKey, { recipients: [uniquePhone()], body: 'hello' })).json() as Accepted;
    const assignedAt = new Date(Date.now() + 1000);
    await cli.api.db.messageEvent.create({ data: { messageId: id!, state: 'assigned', deviceId: user.deviceId!, at: assignedAt } });

    const out = ok(await smsgw('message', 'show', '--user', user.userId, '--message', id!));
    const { history, ...record } = out as { history: unknown[] };
    expect(record).toEqual((await call(cli.api.app, user.apiKey, 'GET', `/api/v1/sms/${id}`)).json());
    expect(history).toEqual([
      { state: 'pending', status: 'queued', device_id: null, detail: null, at: (record as { created_at: string }).created_at },
      { state: 'assigned', status: 'queued', device_id: user.deviceId, detail: null, at: assignedAt.toISOString() },
    ]);
  });

  it("exits 3 for another user's message or an unknown id", async () => {
    const owner = await createTestUser(cli.api.db);
    const {
      message_ids: [theirs],
    } = (await send(cli.api.app, owner.apiKey, { recipients: [uniquePhone()], body: 'x' })).json() as Accepted;
    const user = await createTestUser(cli.api.db, { devices: 0 });
    for (const id of [theirs!, randomUUID(), 'nope']) {
      expect(failure(await smsgw('message', 'show', '--user', user.userId, '--message', id))).toEqual({
        code: 3,
        error: 'not_found',
        message: `no message with id ${id} for user ${user.userId}`,
      });
    }
  });
});
