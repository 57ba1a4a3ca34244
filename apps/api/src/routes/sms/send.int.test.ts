import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, send, startTestApi, type TestApi } from '../../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('POST /api/sms/send', () => {
  it('stores one message per distinct recipient, enqueues one job each with the message id as jobId, and answers accepted', async () => {
    const { apiKey, user } = await createTestUser(api.db);
    const res = await send(api.app, apiKey, { recipients: ['+15550000001', '+15550000002', '+15550000001'], body: 'hello' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ recipients_count: 2, status: 'accepted' });
    expect(body.message_ids).toHaveLength(2);
    expect(body.batch_id).toEqual(expect.any(String));

    const rows = await api.db.message.findMany({ where: { userId: user.id }, orderBy: { to: 'asc' } });
    expect(rows.map((r) => [r.to, r.body, r.state, r.batchId])).toEqual([
      ['+15550000001', 'hello', 'pending', body.batch_id],
      ['+15550000002', 'hello', 'pending', body.batch_id],
    ]);
    for (const id of body.message_ids) {
      const job = await api.queue.getJob(id);
      expect(job?.data).toEqual({ messageId: id });
    }
  });
});
