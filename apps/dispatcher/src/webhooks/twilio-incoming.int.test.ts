import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';
import { loadDeliveryAttempt, purgeReceivedMessages, storeInbound, type SendDeps } from '@smsgw/db/sql';
import { enqueueDispatch, enqueueWebhookDeliveries, publishUserEvents } from '@smsgw/queue';
import { actOnTwilioAnswer } from './twilio-incoming.ts';

/**
 * The replies of a TwiML answer are stored at most once (issue 25, B.4): the delivery's success is
 * their idempotency record, in their transaction, so runs of one delivery that got the answer at
 * the same time store them once, and a run that finds the delivery recorded stores nothing.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

function sendDeps(): SendDeps {
  const { app } = api;
  return {
    sql: api.sql,
    config: app.config,
    incidents: app.incidents,
    enqueueDispatch: (ids, at) => enqueueDispatch(app.dispatchQueue, ids, at),
    enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(app.webhooksQueue, deliveries),
    publishUserEvents: (events) => publishUserEvents(app.redis, app.config.QUEUE_PREFIX, events),
  };
}

/** A received SMS on a device with a Twilio URL, and its delivery as the engine loads it. */
async function receivedWithDelivery() {
  const { userId, devices } = await createTestUser(api.db, { devices: 1 });
  const deviceId = devices[0]!.id;
  await api.db.device.update({ where: { id: deviceId }, data: { twilioSmsUrl: 'https://hooks.example/sms' } });
  const from = uniquePhone();
  const stored = await storeInbound(api.sql, {
    userId,
    deviceId,
    now: new Date(),
    messages: [{ id: randomUUID(), from, to: null, body: 'hi', simNumber: null, receivedAt: new Date(), dedupKey: 'id:1' }],
  });
  expect(stored.deliveries).toHaveLength(1);
  const delivery = (await loadDeliveryAttempt(api.sql, stored.deliveries[0]!.id, new Date()))!;
  return { userId, deviceId, from, delivery };
}

const answer = (body: string) => ({ statusCode: 200, error: null, body });
const TWO_REPLIES = '<Response><Message>one</Message><Message>two</Message></Response>';

describe('the replies of a TwiML answer', () => {
  it('are stored once when two runs of the delivery act on the answer at the same time, and never by a later run', async () => {
    const { userId, deviceId, from, delivery } = await receivedWithDelivery();
    const deps = { sql: api.sql, send: sendDeps() };
    const outcomes = await Promise.all([1, 2, 3].map(() => actOnTwilioAnswer(deps, delivery, answer(TWO_REPLIES), new Date())));
    expect(outcomes.sort()).toEqual(['skipped', 'skipped', 'succeeded']);
    expect(await actOnTwilioAnswer(deps, delivery, answer(TWO_REPLIES), new Date())).toBe('skipped');
    const replies = await api.db.message.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
    expect(replies.map((m) => [m.to, m.body, m.requestedDeviceId]).sort()).toEqual([
      [from, 'one', deviceId],
      [from, 'two', deviceId],
    ]);
    expect(await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({ state: 'succeeded', attempts: 1, lastError: null });
    expect((await api.db.quotaUsage.findFirstOrThrow({ where: { userId } })).used).toBe(2);
  });

  it('sends nothing and records why when the quota cannot cover them; the delivery is not tried again', async () => {
    const { userId, delivery } = await receivedWithDelivery();
    await api.db.user.update({ where: { id: userId }, data: { monthlyQuota: 1 } });
    const deps = { sql: api.sql, send: sendDeps() };
    expect(await actOnTwilioAnswer(deps, delivery, answer(TWO_REPLIES), new Date())).toBe('failed');
    expect(await api.db.message.count({ where: { userId } })).toBe(0);
    expect(await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
      state: 'failed',
      nextAttemptAt: null,
      lastStatusCode: 200,
      lastError: expect.stringContaining('no reply was sent: '),
    });
  });

  it('go with their received SMS when retention removes it: the callback and its delivery too', async () => {
    const { userId, delivery } = await receivedWithDelivery();
    const callbackId = delivery.webhookId;
    expect(await api.db.messageCallback.count({ where: { id: callbackId } })).toBe(1);
    expect(await purgeReceivedMessages(api.sql, { createdBefore: new Date(Date.now() + 60_000), limit: 1000 })).toBeGreaterThanOrEqual(1);
    expect(await api.db.receivedMessage.count({ where: { userId } })).toBe(0);
    expect(await api.db.messageCallback.count({ where: { id: callbackId } })).toBe(0);
    expect(await api.db.webhookDelivery.count({ where: { id: delivery.id } })).toBe(0);
  });
});
