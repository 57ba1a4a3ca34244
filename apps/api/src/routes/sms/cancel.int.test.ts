import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assignMessages, offerMessages } from '@smsgw/db';
import { call, createTestUser, send, startTestApi, uniquePhone as phone, type TestApi, type TestUser } from '../../testing/test-api.ts';
import { enrolConnectedPhone, openPhoneStream, phoneRequest } from '../../testing/test-phone.ts';

/** Cancel (decisions.md, "Cancel"): before a device has a message, and after, by protocol and app version. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.216.34'] });
});
afterAll(async () => {
  await api?.close();
});

const cancel = (apiKey: string, id: string) => call(api.app, apiKey, 'POST', `/api/v1/sms/${id}/cancel`);
const cancelBatch = (apiKey: string, batchId: string) => call(api.app, apiKey, 'POST', `/api/v1/sms/batch/${batchId}/cancel`);
const row = (id: string) => api.db.message.findUniqueOrThrow({ where: { id } });
const used = async (userId: string) => (await api.db.quotaUsage.aggregate({ where: { userId }, _sum: { used: true } }))._sum.used ?? 0;

async function sendTo(user: TestUser, count: number, extra: object = {}): Promise<{ ids: string[]; batchId?: string }> {
  const res = await send(api.app, user.apiKey, { recipients: Array.from({ length: count }, phone), body: 'cancel me', ...extra });
  expect(res.statusCode).toBe(200);
  return { ids: res.json().message_ids, batchId: res.json().batch_id };
}

/** Assigns the messages to the device, as the dispatcher does, and optionally offers them (a claim or a pull). */
async function handTo(deviceId: string, ids: string[], offer: boolean): Promise<void> {
  const assigned = await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId })), now: new Date() });
  expect(assigned).toHaveLength(ids.length);
  if (offer) expect(await offerMessages(api.sql, { deviceId, limit: 500, order: 'oldest', now: new Date() })).toHaveLength(ids.length);
}

describe('POST /api/v1/sms/:id/cancel', () => {
  it('cancels a pending message: final status cancelled, quota given back, history, webhook event, list filter', async () => {
    const user = await createTestUser(api.db);
    const hook = await call(api.app, user.apiKey, 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/smsgw', events: ['message.cancelled'] });
    expect(hook.statusCode).toBe(201);
    const {
      ids: [id],
    } = await sendTo(user, 1);
    expect(await used(user.userId)).toBe(1);

    const res = await cancel(user.apiKey, id!);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'cancelled', state: 'cancelled', device_id: null });
    expect(await used(user.userId)).toBe(0);
    expect((await row(id!)).cancelledAt).not.toBeNull();
    expect((await api.db.messageEvent.findMany({ where: { messageId: id! } })).map((e) => e.state)).toEqual(['cancelled']);
    const deliveries = await api.db.webhookDelivery.findMany({ where: { messageId: id! } });
    expect(deliveries.map((d) => [d.type, (d.data as { state: string }).state])).toEqual([['message.cancelled', 'cancelled']]);

    const listed = await call(api.app, user.apiKey, 'GET', '/api/v1/sms?status=cancelled');
    expect(listed.json().data.map((m: { id: string }) => m.id)).toEqual([id]);
    expect((await call(api.app, user.apiKey, 'GET', '/api/v1/sms?status=queued')).json().data).toEqual([]);
  });

  it('cancels a message assigned but never offered; a cancelled message is never offered, and a repeat answers the same', async () => {
    const user = await createTestUser(api.db);
    const {
      ids: [id],
    } = await sendTo(user, 1);
    await handTo(user.deviceId!, [id!], false);
    expect((await cancel(user.apiKey, id!)).statusCode).toBe(200);
    expect(await offerMessages(api.sql, { deviceId: user.deviceId!, limit: 10, order: 'oldest', now: new Date() })).toEqual([]);
    const again = await cancel(user.apiKey, id!);
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe('cancelled');
    expect(await used(user.userId)).toBe(0);
  });

  it('never takes the quota below 0', async () => {
    const user = await createTestUser(api.db);
    const {
      ids: [id],
    } = await sendTo(user, 1);
    await api.db.quotaUsage.updateMany({ where: { userId: user.userId }, data: { used: 0 } });
    expect((await cancel(user.apiKey, id!)).statusCode).toBe(200);
    expect(await used(user.userId)).toBe(0);
  });

  it('answers 409 not_cancellable for a message a native device has taken, and changes nothing', async () => {
    const user = await createTestUser(api.db);
    const {
      ids: [id],
    } = await sendTo(user, 1);
    await handTo(user.deviceId!, [id!], true);
    const res = await cancel(user.apiKey, id!);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'not_cancellable', message: expect.stringContaining('taken the message already') });
    expect((await row(id!)).state).toBe('assigned');
    expect(await used(user.userId)).toBe(1);
  });

  it.each([['sending'], ['sent'], ['delivered'], ['failed']] as const)('answers 409 for a message in state %s', async (state) => {
    const user = await createTestUser(api.db);
    const {
      ids: [id],
    } = await sendTo(user, 1);
    await api.db.message.update({ where: { id: id! }, data: { state, deviceId: user.deviceId!, offeredAt: new Date() } });
    const res = await cancel(user.apiKey, id!);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('not_cancellable');
    expect((await row(id!)).state).toBe(state);
  });

  it('answers 404 for another user’s message, an unknown id and a malformed one, and changes nothing', async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const {
      ids: [id],
    } = await sendTo(owner, 1);
    for (const target of [id!, '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10', 'nope']) {
      const res = await cancel(other.apiKey, target);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found', message: 'Message not found' });
    }
    expect((await row(id!)).state).toBe('pending');
    expect(await used(owner.userId)).toBe(1);
  });
});

describe('cancel of a message an SMS Gate phone holds', () => {
  /** A message offered to (pulled by) a phone of this app version, not yet acknowledged. */
  async function heldByPhone(version: string) {
    const user = await createTestUser(api.db, { devices: 0 });
    const enrolled = await enrolConnectedPhone(api.app, api.db, user.userId);
    await api.db.device.update({ where: { id: enrolled.id }, data: { appVersion: version } });
    const {
      ids: [id],
    } = await sendTo(user, 1);
    await handTo(enrolled.id, [id!], true);
    return { user, phone: enrolled, id: id! };
  }

  it('asks a v1.68 phone (202, still assigned, offered no more); its Cancelled snapshot then cancels it and gives the quota back', async () => {
    const { user, phone: enrolled, id } = await heldByPhone('1.68.0');

    const res = await cancel(user.apiKey, id!);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id, status: 'queued', state: 'assigned' });
    expect((await row(id!)).cancelRequestedAt).not.toBeNull();
    const pull = await phoneRequest(api.app, 'GET', '/mobile/v1/message', { authorization: `Bearer ${enrolled.token}` });
    expect(pull.json()).toEqual([]);
    expect(await used(user.userId)).toBe(1);

    const patched = await phoneRequest(api.app, 'PATCH', '/mobile/v1/message', {
      authorization: `Bearer ${enrolled.token}`,
      body: [{ id, state: 'Cancelled', recipients: [{ phoneNumber: '+15550000000', state: 'Cancelled' }], states: { Cancelled: new Date().toISOString() } }],
    });
    expect(patched.statusCode).toBe(204);
    expect(await row(id!)).toMatchObject({ state: 'cancelled', error: null });
    expect(await used(user.userId)).toBe(0);
  });

  it('asks a v1.68 phone for a message it acknowledged (the app acknowledges what it holds back); a phone that sent it goes on as before', async () => {
    const { user, id } = await heldByPhone('1.68.0');
    // Its `Pending` snapshot, as the dispatcher applies it.
    await api.db.message.update({ where: { id }, data: { state: 'sending', sendingAt: new Date() } });

    const res = await cancel(user.apiKey, id);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id, state: 'sending' });
    expect((await row(id)).cancelRequestedAt).not.toBeNull();
    // The phone had already handed it to Android: it does not cancel, and reports it sent.
    await api.db.message.update({ where: { id }, data: { state: 'sent', sentAt: new Date() } });
    expect(await used(user.userId)).toBe(1);
    const again = await cancel(user.apiKey, id);
    expect({ status: again.statusCode, message: again.json().message }).toEqual({
      status: 409,
      message: 'The message cannot be cancelled: Its device has sent the message already; it cannot be taken back.',
    });
  });

  it('tells the phone MessageCancelled on its stream, live and again when the stream opens; an older app is never told', async () => {
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/mobile/v1/events`;
    const { user, phone: enrolled, id } = await heldByPhone('1.68.0');
    const live = await openPhoneStream(url, enrolled.token);
    await vi.waitFor(() => expect(live.events.map((e) => e.event)).toContain('WebhooksUpdated'), { timeout: 5_000, interval: 20 });
    expect((await cancel(user.apiKey, id)).statusCode).toBe(202);
    const told = (events: { event?: string; data: string }[]) => events.filter((e) => e.event === 'MessageCancelled').map((e) => JSON.parse(e.data));
    await vi.waitFor(() => expect(told(live.events)).toEqual([{ messageId: id }]), { timeout: 5_000, interval: 20 });
    await live.close();
    const reopened = await openPhoneStream(url, enrolled.token);
    await vi.waitFor(() => expect(told(reopened.events)).toEqual([{ messageId: id }]), { timeout: 5_000, interval: 20 });
    await reopened.close();

    const old = await heldByPhone('1.66.0');
    const oldStream = await openPhoneStream(url, old.phone.token);
    expect((await cancel(old.user.apiKey, old.id)).statusCode).toBe(409);
    await api.db.message.update({ where: { id: old.id }, data: { cancelRequestedAt: new Date() } });
    await oldStream.close();
    const oldAgain = await openPhoneStream(url, old.phone.token);
    await vi.waitFor(() => expect(oldAgain.events.map((e) => e.event)).toContain('WebhooksUpdated'), { timeout: 5_000, interval: 20 });
    await oldAgain.close();
    expect(told([...oldStream.events, ...oldAgain.events])).toEqual([]);
  });

  it('refuses with 409 when the phone’s app is older than 1.67, saying why', async () => {
    const { user, id } = await heldByPhone('1.66.2');
    const res = await cancel(user.apiKey, id!);
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('version 1.66.2');
    expect((await row(id!)).cancelRequestedAt).toBeNull();
  });
});

describe('POST /api/v1/sms/batch/:batch_id/cancel', () => {
  it('cancels what it can and counts the rest', async () => {
    const user = await createTestUser(api.db);
    const { ids, batchId } = await sendTo(user, 5);
    await handTo(user.deviceId!, [ids[3]!], true);
    await api.db.message.update({ where: { id: ids[4]! }, data: { state: 'sent', deviceId: user.deviceId!, offeredAt: new Date() } });

    const res = await cancelBatch(user.apiKey, batchId!);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      batch_id: batchId,
      cancelled: 3,
      cancelling: 0,
      not_cancelled: 2,
      not_cancelled_ids: expect.arrayContaining([ids[3], ids[4]]),
    });
    expect(await used(user.userId)).toBe(2);
    expect((await cancelBatch(user.apiKey, batchId!)).json()).toMatchObject({ cancelled: 3, not_cancelled: 2 });
  });

  it('answers 404 for another user’s batch and an unknown one, and changes nothing', async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const { batchId } = await sendTo(owner, 2);
    for (const target of [batchId!, '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10', 'nope']) expect((await cancelBatch(other.apiKey, target)).statusCode).toBe(404);
    expect(await used(owner.userId)).toBe(2);
    expect(await api.db.message.count({ where: { batchId: batchId!, state: 'pending' } })).toBe(2);
  });
});
