import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice, deleteDevice } from '@smsgw/db';
import { countJobs, createTestUser, send, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

// A small default, so that tests can reach it and tell it apart from a user's own limit.
const DEFAULT_QUOTA = 10;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MONTHLY_QUOTA_DEFAULT: String(DEFAULT_QUOTA) });
});
afterAll(async () => {
  await api?.close();
});

const phones = (n: number) => Array.from({ length: n }, phone);

/** The current calendar month in UTC, computed here rather than by the code under test. */
function currentMonth() {
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return { label: start.toISOString().slice(0, 7), start, next, previous };
}

async function usedThisMonth(userId: string): Promise<number> {
  const row = await api.db.quotaUsage.findUnique({ where: { userId_period: { userId, period: currentMonth().start } } });
  return row?.used ?? 0;
}

async function getQuota(apiKey: string, url = '/api/v1/quota') {
  return api.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
}

const QUOTA_EXCEEDED = { error: 'quota_exceeded', message: 'Monthly message quota exceeded' };

describe('GET /api/v1/quota', () => {
  it('returns {period, limit, used, remaining, resets_at} of the current UTC month, with the default limit', async () => {
    const { apiKey } = await createTestUser(api.db);
    const month = currentMonth();

    const res = await getQuota(apiKey);

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      period: month.label,
      limit: DEFAULT_QUOTA,
      used: 0,
      remaining: DEFAULT_QUOTA,
      resets_at: month.next.toISOString(),
      plan: 'self-hosted',
      sms_sent_this_month: 0,
      max_sms_per_month: DEFAULT_QUOTA,
      devices_registered: expect.any(Number),
      max_devices: null,
      reset_date: month.next.toISOString(),
    });
  });

  it('gives the Vendel SDK its fields: messages sent this month, the limit, and the devices registered', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 42 });
    const devicesBefore = await api.db.device.count({ where: { userId: user.id, deletedAt: null } });
    await createDevice(api.db, { userId: user.id, name: 'second' });
    const gone = await createDevice(api.db, { userId: user.id, name: 'deleted' });
    await deleteDevice(api.db, { userId: user.id, id: gone.device.id });
    expect((await send(api.app, apiKey, { recipients: phones(3), body: 'hi' })).statusCode).toBe(200);

    const res = await getQuota(apiKey, '/api/plans/quota');

    expect(res.json()).toMatchObject({
      plan: 'self-hosted',
      sms_sent_this_month: 3,
      max_sms_per_month: 42,
      devices_registered: devicesBefore + 1,
      max_devices: null,
    });
  });

  it('answers the same at the alias GET /api/plans/quota', async () => {
    const { apiKey } = await createTestUser(api.db, { monthlyQuota: 42 });
    await send(api.app, apiKey, { recipients: phones(2), body: 'hi' });

    const [v1, plans] = await Promise.all([getQuota(apiKey), getQuota(apiKey, '/api/plans/quota')]);

    expect(plans.statusCode).toBe(200);
    expect(plans.json()).toEqual(v1.json());
    expect(plans.json()).toMatchObject({ limit: 42, used: 2, remaining: 40 });
  });

  it.each([['/api/v1/quota'], ['/api/plans/quota']])('%s answers 401 unauthorized without credentials', async (url) => {
    const res = await api.app.inject({ method: 'GET', url });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 401,
      body: { error: 'unauthorized', message: 'Authentication required' },
    });
  });

  it('counts only the current month: usage of the previous month is not shown or charged', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 5 });
    await api.db.quotaUsage.create({ data: { userId: user.id, period: currentMonth().previous, used: 5 } });

    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'new month' });

    expect(res.statusCode).toBe(200);
    expect((await getQuota(apiKey)).json()).toMatchObject({ period: currentMonth().label, limit: 5, used: 1, remaining: 4 });
  });
});

describe('monthly quota on POST /api/sms/send', () => {
  it('charges one message per distinct recipient', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const [a, b] = phones(2);

    const res = await send(api.app, apiKey, { recipients: [a, b, a], body: 'hi' });

    expect(res.statusCode).toBe(200);
    expect(await usedThisMonth(user.id)).toBe(2);
    expect((await getQuota(apiKey)).json()).toMatchObject({ limit: DEFAULT_QUOTA, used: 2, remaining: DEFAULT_QUOTA - 2 });
  });

  it('uses MONTHLY_QUOTA_DEFAULT for a user without a limit of their own: the whole default is accepted, one more is 402', async () => {
    const { apiKey, user } = await createTestUser(api.db);

    const full = await send(api.app, apiKey, { recipients: phones(DEFAULT_QUOTA), body: 'hi' });
    expect(full.statusCode).toBe(200);

    const over = await send(api.app, apiKey, { recipients: [phone()], body: 'one more' });
    expect({ status: over.statusCode, body: over.json() }).toEqual({ status: 402, body: QUOTA_EXCEEDED });
    expect(await usedThisMonth(user.id)).toBe(DEFAULT_QUOTA);
    expect((await getQuota(apiKey)).json()).toMatchObject({ limit: DEFAULT_QUOTA, used: DEFAULT_QUOTA, remaining: 0 });
  });

  it('lets a per-user limit above the default override it', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: DEFAULT_QUOTA + 5 });

    const res = await send(api.app, apiKey, { recipients: phones(DEFAULT_QUOTA + 5), body: 'more than the default' });

    expect(res.statusCode).toBe(200);
    expect(await usedThisMonth(user.id)).toBe(DEFAULT_QUOTA + 5);
    expect((await getQuota(apiKey)).json()).toMatchObject({ limit: DEFAULT_QUOTA + 5, used: DEFAULT_QUOTA + 5, remaining: 0 });
  });

  it('lets a per-user limit below the default override it', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 2 });

    const res = await send(api.app, apiKey, { recipients: phones(3), body: 'three' });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 402, body: QUOTA_EXCEEDED });
    expect(await usedThisMonth(user.id)).toBe(0);
    expect((await getQuota(apiKey)).json()).toMatchObject({ limit: 2, used: 0, remaining: 2 });
  });

  it('refuses a request for n messages with fewer than n left as a whole: nothing stored, charged or enqueued', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 100 });
    await api.db.quotaUsage.create({ data: { userId: user.id, period: currentMonth().start, used: 95 } });
    const jobsBefore = await countJobs(api.queue);

    const res = await send(api.app, apiKey, { recipients: phones(6), body: 'six of five' });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 402, body: QUOTA_EXCEEDED });
    expect(await usedThisMonth(user.id)).toBe(95);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(0);
    expect(await api.db.batch.count({ where: { userId: user.id } })).toBe(0);
    expect(await countJobs(api.queue)).toBe(jobsBefore);

    const exact = await send(api.app, apiKey, { recipients: phones(5), body: 'five of five' });
    expect(exact.statusCode).toBe(200);
    expect(await usedThisMonth(user.id)).toBe(100);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(5);
  });

  it("charges each user's own quota: another user's exhausted quota does not refuse this user", async () => {
    const exhausted = await createTestUser(api.db, { monthlyQuota: 1 });
    await api.db.quotaUsage.create({ data: { userId: exhausted.user.id, period: currentMonth().start, used: 1 } });
    const fresh = await createTestUser(api.db, { monthlyQuota: 1 });

    const refused = await send(api.app, exhausted.apiKey, { recipients: [phone()], body: 'hi' });
    const accepted = await send(api.app, fresh.apiKey, { recipients: [phone()], body: 'hi' });

    expect(refused.statusCode).toBe(402);
    expect(accepted.statusCode).toBe(200);
    expect(await usedThisMonth(fresh.user.id)).toBe(1);
    expect(await usedThisMonth(exhausted.user.id)).toBe(1);
  });

  it('with limit 100 and 95 used, 50 concurrent one-recipient sends give exactly 5 accepted and 45 quota_exceeded', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 100 });
    await api.db.quotaUsage.create({ data: { userId: user.id, period: currentMonth().start, used: 95 } });

    const responses = await Promise.all(phones(50).map((to) => send(api.app, apiKey, { recipients: [to], body: 'race' })));

    const accepted = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode === 402);
    expect({ accepted: accepted.length, refused: refused.length }).toEqual({ accepted: 5, refused: 45 });
    for (const r of refused) expect(r.json()).toEqual(QUOTA_EXCEEDED);
    expect(await usedThisMonth(user.id)).toBe(100);
    expect((await getQuota(apiKey)).json()).toMatchObject({ limit: 100, used: 100, remaining: 0 });

    const acceptedIds = accepted.flatMap((r) => r.json().message_ids as string[]).sort();
    const rows = await api.db.message.findMany({ where: { userId: user.id }, select: { id: true } });
    expect(rows.map((r) => r.id).sort()).toEqual(acceptedIds);
    const jobs = await Promise.all(acceptedIds.map((id) => api.queue.getJob(id)));
    expect(jobs.map((j) => j?.data)).toEqual(acceptedIds.map((messageId) => ({ messageId })));
  });

  it('with limit 100, 30 concurrent sends of 4 recipients each give exactly 25 accepted and never overcharge', async () => {
    const { apiKey, user } = await createTestUser(api.db, { monthlyQuota: 100 });

    const responses = await Promise.all(Array.from({ length: 30 }, () => send(api.app, apiKey, { recipients: phones(4), body: 'fours' })));

    const statuses = responses.map((r) => r.statusCode);
    expect({ accepted: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 402).length }).toEqual({
      accepted: 25,
      refused: 5,
    });
    expect(await usedThisMonth(user.id)).toBe(100);
    expect(await api.db.message.count({ where: { userId: user.id } })).toBe(100);
    expect(await api.db.batch.count({ where: { userId: user.id } })).toBe(25);
  });
});
