import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { createTestUser, send, startTestApi, uniquePhone, type TestApi, type TestUser } from '../../../testing/test-api.ts';
import { reportsOfJob } from '@smsgw/queue';

/**
 * Times of the native device protocol that the date-time format accepts but JavaScript's Date does
 * not: a leap second (`23:59:60`). Found by the route fuzz (test/fuzz): an incoming SMS answered
 * 500, and a report was queued with an `at` that failed its whole job on every retry.
 */
let api: TestApi;
let user: TestUser;

beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.db);
});
afterAll(async () => {
  await api?.close();
});

const device = () => ({ authorization: `Bearer ${user.devices[0]!.token}` });

describe('leap seconds in the native device protocol', () => {
  it('stores an incoming SMS received at a leap second as received in its last millisecond', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/api/v1/device/inbound',
      headers: device(),
      payload: { messages: [{ id: 'leap', from: '+15550001111', message: 'hi', received_at: '2016-12-31T23:59:60Z' }] },
    });

    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ stored: 1, duplicates: 0 });
    const stored = await api.db.receivedMessage.findFirstOrThrow({ where: { deviceId: user.deviceId! } });
    expect(stored.receivedAt.toISOString()).toBe('2016-12-31T23:59:59.999Z');
  });

  it('queues a report at a leap second with an `at` that Date can read', async () => {
    const sent = await send(api.app, user.apiKey, { recipients: [uniquePhone()], body: 'x' });
    const [id] = sent.json().message_ids as string[];
    await assignMessages(api.sql, { assignments: [{ id: id!, deviceId: user.deviceId! }], now: new Date() });

    const res = await api.app.inject({
      method: 'POST',
      url: '/api/v1/device/reports',
      headers: device(),
      payload: { reports: [{ id, status: 'sent', at: '2016-12-31T23:59:60.5Z' }] },
    });

    expect(res.statusCode).toBe(202);
    const jobs = await api.app.reportsQueue.getJobs(['waiting', 'delayed', 'prioritized']);
    const reports = jobs.flatMap(reportsOfJob).flatMap((p) => p.reports);
    expect(reports).toEqual([{ id, status: 'sent', at: '2016-12-31T23:59:59.999Z' }]);
  });
});
