import { describe, expect, it, vi } from 'vitest';
import { assignMessages, offerMessages, stalePending } from '@smsgw/db';
import { enqueueDispatch } from '@smsgw/queue';
import { createTestUser, send, uniquePhone as phone } from '@smsgw/api/testing';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';

/** What keeps a scheduled or expired message from any device, whichever path reaches it (decisions.md, "Scheduled sends and validity"). */
const harness = useDispatcherTestApi();

const message = (id: string) => harness.api.db.message.findUniqueOrThrow({ where: { id } });

async function sendOne(apiKey: string, extra: object): Promise<string> {
  const res = await send(harness.api.app, apiKey, { recipients: [phone()], body: 'when due', ...extra });
  expect(res.statusCode).toBe(200);
  return res.json().message_ids[0];
}

describe('a message not yet due', () => {
  it('is not assigned by a dispatch job that runs early, which runs again at send_at and assigns it then', async () => {
    const { apiKey } = await createTestUser(harness.api.db);
    const sendAt = new Date(Date.now() + 2500);
    const id = await sendOne(apiKey, { send_at: sendAt.toISOString() });
    // The delayed job replaced by one that runs at once (a lost delay, a producer's clock ahead).
    await (await harness.api.queue.getJob(id))!.remove();
    await enqueueDispatch(harness.api.queue, [id]);
    await harness.start();

    await vi.waitFor(async () => expect(await (await harness.api.queue.getJob(id))?.getState()).toBe('delayed'), { timeout: 5_000, interval: 20 });
    expect((await message(id)).state).toBe('pending');
    await vi.waitFor(async () => expect((await message(id)).state).toBe('assigned'), { timeout: 10_000, interval: 50 });
    expect((await message(id)).assignedAt!.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
  });

  it('is refused by the assignment statement itself, as is one past its valid_until', async () => {
    const user = await createTestUser(harness.api.db);
    const later = await sendOne(user.apiKey, { send_at: new Date(Date.now() + 60_000).toISOString() });
    const expired = await sendOne(user.apiKey, { ttl_seconds: 1 });
    const due = await sendOne(user.apiKey, {});
    const now = new Date(Date.now() + 1500);
    const assigned = await assignMessages(harness.api.sql, { assignments: [later, expired, due].map((id) => ({ id, deviceId: user.deviceId! })), now });
    expect(assigned.map((a) => a.id)).toEqual([due]);
  });

  it('is left to its delayed job by the outbox until it is due', async () => {
    const { apiKey, userId } = await createTestUser(harness.api.db);
    const later = await sendOne(apiKey, { send_at: new Date(Date.now() + 60_000).toISOString() });
    const past = new Date(Date.now() - 3600_000);
    await harness.api.db.message.updateMany({ where: { userId }, data: { updatedAt: past } });
    const stale = async (updatedBefore: Date) => (await stalePending(harness.api.sql, { updatedBefore, limit: 1000 })).ids;
    expect(await stale(new Date())).not.toContain(later);
    expect(await stale(new Date(Date.now() + 61_000))).toContain(later);
  });
});

describe('a message past its valid_until', () => {
  it('is never offered to its device, even when assigned before', async () => {
    const user = await createTestUser(harness.api.db);
    const id = await sendOne(user.apiKey, { ttl_seconds: 1 });
    expect(await assignMessages(harness.api.sql, { assignments: [{ id, deviceId: user.deviceId! }], now: new Date() })).toHaveLength(1);
    expect(await offerMessages(harness.api.sql, { deviceId: user.deviceId!, limit: 10, order: 'oldest', now: new Date(Date.now() + 1500) })).toEqual([]);
  });

  it('fails as expired when its dispatch job runs late, without reaching a device', async () => {
    const { apiKey } = await createTestUser(harness.api.db);
    const id = await sendOne(apiKey, { ttl_seconds: 1 });
    await (await harness.api.queue.getJob(id))!.remove();
    await vi.waitFor(async () => expect(Date.now()).toBeGreaterThan((await message(id)).validUntil!.getTime()), { timeout: 3_000, interval: 50 });
    await enqueueDispatch(harness.api.queue, [id]);
    await harness.start();
    await vi.waitFor(async () => expect(await message(id)).toMatchObject({ state: 'failed', error: 'expired before it could be sent', deviceId: null }), {
      timeout: 10_000,
      interval: 50,
    });
  });
});
