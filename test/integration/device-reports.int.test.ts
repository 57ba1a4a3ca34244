import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { applyReports } from '@smsgw/db';
import { enqueueReportBatches, JOBS, reportsOfJob } from '@smsgw/queue';
import { createTestUser, send, type TestDevice } from '@smsgw/api/testing';
import {
  api,
  startDispatcher,
  assignedTo,
  asDevice,
  claimIds,
  report,
  message,
  eventStates,
  reportsHandled,
  useDeviceProtocolApi,
} from '../support/device-protocol.ts';

/**
 * Reports of the device protocol (apps/api/src/routes/device-protocols/native) applied by the dispatcher: sent,
 * delivered and failed, once each, for the device's own messages only.
 */
useDeviceProtocolApi();

describe('POST /api/v1/device/reports', () => {
  /** A message of the device, offered to it by a claim (still `assigned`). */
  async function claimedBy(apiKey: string, device: TestDevice): Promise<string> {
    const [id] = await assignedTo(apiKey, device, 1);
    expect(await claimIds(device.token)).toContain(id);
    return id!;
  }

  it('applies sent then delivered: sent_at and delivered_at from the reports, one event each', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    const sentAt = new Date().toISOString();

    const sent = await report(device.token, [{ id, status: 'sent', at: sentAt }]);
    expect({ status: sent.statusCode, body: sent.json() }).toEqual({ status: 202, body: { accepted: 1, rejected: [] } });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    expect((await message(id)).sentAt?.toISOString()).toBe(sentAt);

    const deliveredAt = new Date().toISOString();
    const delivered = await report(device.token, [{ id, status: 'delivered', at: deliveredAt }]);
    expect(delivered.statusCode).toBe(202);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });

    const row = await message(id);
    expect({ sentAt: row.sentAt?.toISOString(), deliveredAt: row.deliveredAt?.toISOString(), error: row.error }).toEqual({
      sentAt,
      deliveredAt,
      error: null,
    });
    expect(await eventStates(id)).toEqual(['assigned', 'sent', 'delivered']);
    // The user sees it through the API as well.
    const record = await api.app.inject({ method: 'GET', url: `/api/v1/sms/${id}`, headers: { 'x-api-key': apiKey } });
    expect(record.json()).toMatchObject({ status: 'delivered', state: 'delivered', sent_at: sentAt, delivered_at: deliveredAt });
  });

  it('applies the reports of several devices in one job, and the one-device jobs of API processes of earlier versions', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [first, second] = [devices[0]!, devices[1]!];
    await startDispatcher();
    const [a, b, c] = [await claimedBy(apiKey, first), await claimedBy(apiKey, second), await claimedBy(apiKey, first)];
    const receivedAt = new Date().toISOString();
    // As an API process of this version enqueues them: both devices' reports in one job.
    await enqueueReportBatches(api.app.reportsQueue, [
      { deviceId: first.id, receivedAt, reports: [{ id: a, status: 'sent' }] },
      { deviceId: second.id, receivedAt, reports: [{ id: b, status: 'delivered' }] },
    ]);
    // As an earlier version enqueued them: one job per device.
    await api.app.reportsQueue.add('device.reports', { deviceId: first.id, receivedAt, reports: [{ id: c, status: 'sent' }] }, JOBS['device.reports'].options);
    await vi.waitFor(
      async () => expect([(await message(a)).state, (await message(b)).state, (await message(c)).state]).toEqual(['sent', 'delivered', 'sent']),
      {
        timeout: 15_000,
      },
    );
    await reportsHandled();
  });

  it('packs the reports of many requests into jobs of up to 500, each device’s in order', async () => {
    const added = vi.spyOn(api.app.reportsQueue, 'addBulk').mockResolvedValueOnce([]);
    const [one, two] = [randomUUID(), randomUUID()];
    const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
    const first = ids(300);
    const second = ids(450);
    const later = ids(10);
    await enqueueReportBatches(api.app.reportsQueue, [
      { deviceId: one, receivedAt: '2026-01-01T00:00:00.000Z', reports: first.map((id) => ({ id, status: 'sent' as const })) },
      { deviceId: two, receivedAt: '2026-01-01T00:00:01.000Z', reports: second.map((id) => ({ id, status: 'sent' as const })) },
      {
        deviceId: one,
        receivedAt: '2026-01-01T00:00:02.000Z',
        reports: later.map((id) => ({ id, status: 'delivered' as const, at: '2026-01-01T00:00:03.000Z' })),
      },
    ]);
    const jobs = added.mock.calls[0]![0];
    added.mockRestore();
    expect(jobs.map((job) => job.name)).toEqual(['device.reports.v2', 'device.reports.v2']);
    const payloads = jobs.flatMap(reportsOfJob);
    expect(jobs.map((job) => reportsOfJob(job).reduce((n, p) => n + p.reports.length, 0))).toEqual([500, 260]);
    const of = (deviceId: string) => payloads.filter((p) => p.deviceId === deviceId).flatMap((p) => p.reports);
    expect(of(one)).toEqual([
      ...first.map((id) => ({ id, status: 'sent', at: '2026-01-01T00:00:00.000Z' })),
      ...later.map((id) => ({ id, status: 'delivered', at: '2026-01-01T00:00:03.000Z' })),
    ]);
    expect(of(two)).toEqual(second.map((id) => ({ id, status: 'sent', at: '2026-01-01T00:00:01.000Z' })));
  });

  it('applies sent and delivered of one message given in one batch', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);

    // Listed in the "wrong" order: they are applied in lifecycle order.
    const res = await report(device.token, [
      { id, status: 'delivered' },
      { id, status: 'sent' },
    ]);
    expect(res.json()).toEqual({ accepted: 2, rejected: [] });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });
    expect(await eventStates(id)).toEqual(['assigned', 'sent', 'delivered']);
    expect((await message(id)).sentAt).not.toBeNull();
  });

  it('changes nothing on a duplicate or backward report after delivered (state, times, updated_at, events)', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    await report(device.token, [
      { id, status: 'sent' },
      { id, status: 'delivered' },
    ]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('delivered'), { timeout: 15_000 });
    const before = await message(id);
    const eventsBefore = await eventStates(id);

    const late = await report(device.token, [
      { id, status: 'sent', at: new Date().toISOString() },
      { id, status: 'delivered', at: new Date().toISOString() },
      { id, status: 'failed', error: 'late failure' },
    ]);
    // Accepted (reports are idempotent), then handled by the dispatcher without effect.
    expect(late.json()).toEqual({ accepted: 3, rejected: [] });
    await reportsHandled();

    expect(await message(id)).toEqual(before);
    expect(await eventStates(id)).toEqual(eventsBefore);
  });

  it('changes nothing on a second `sent`', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);
    await report(device.token, [{ id, status: 'sent', at: '2026-11-21T10:30:00.000Z' }]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    const before = await message(id);

    await report(device.token, [{ id, status: 'sent', at: '2026-11-21T11:00:00.000Z' }]);
    await reportsHandled();

    expect(await message(id)).toEqual(before);
    expect(await eventStates(id)).toEqual(['assigned', 'sent']);
  });

  it("lists another device's message and malformed or unknown ids in `rejected`, and accepts the rest of the batch", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 2 });
    const [mine, other] = devices as [TestDevice, TestDevice];
    const stranger = await createTestUser(api.db, { devices: 1 });
    await startDispatcher();
    const own = await claimedBy(apiKey, mine);
    const othersMessage = await claimedBy(apiKey, other);
    const strangersMessage = await claimedBy(stranger.apiKey, stranger.devices[0]!);
    const unknown = randomUUID();

    const res = await report(mine.token, [
      { id: othersMessage, status: 'sent' },
      { id: own, status: 'sent' },
      { id: 'not-a-uuid', status: 'sent' },
      { id: strangersMessage, status: 'delivered' },
      { id: unknown, status: 'failed' },
    ]);

    expect(res.statusCode).toBe(202);
    const rejection = (rid: string) => ({ id: rid, error: 'not_found', message: 'No message of this device has this id.' });
    expect(res.json()).toEqual({
      accepted: 1,
      rejected: [rejection(othersMessage), rejection('not-a-uuid'), rejection(strangersMessage), rejection(unknown)],
    });
    await vi.waitFor(async () => expect((await message(own)).state).toBe('sent'), { timeout: 15_000 });
    await reportsHandled();
    expect((await message(othersMessage)).state).toBe('assigned');
    expect((await message(strangersMessage)).state).toBe('assigned');
  });

  it("keeps a report's time between the first offer and its arrival, whatever the phone's clock says", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const early = await claimedBy(apiKey, device);
    const late = await claimedBy(apiKey, device);
    const before = Date.now();
    await report(device.token, [
      { id: early, status: 'sent', at: '2000-01-01T00:00:00.000Z' },
      { id: late, status: 'sent', at: '2099-01-01T00:00:00.000Z' },
    ]);
    await vi.waitFor(async () => expect((await message(late)).state).toBe('sent'), { timeout: 15_000 });
    await vi.waitFor(async () => expect((await message(early)).state).toBe('sent'), { timeout: 15_000 });
    const earlyRow = await api.db.message.findUniqueOrThrow({ where: { id: early } });
    expect(earlyRow.sentAt?.getTime()).toBe(earlyRow.offeredAt?.getTime());
    const lateSentAt = (await message(late)).sentAt!.getTime();
    expect(lateSentAt).toBeGreaterThanOrEqual(before);
    expect(lateSentAt).toBeLessThanOrEqual(Date.now());
  });

  it('refuses to fail a message the device was assigned but never offered', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const res = await send(api.app, apiKey, { recipients: ['+15557770001'], body: 'not claimed yet' });
    const id = res.json().message_ids[0] as string;
    await vi.waitFor(async () => expect((await message(id)).state).toBe('assigned'), { timeout: 15_000 });
    const now = new Date();
    expect((await applyReports(api.sql, { status: 'failed', reports: [{ id, deviceId: device.id, at: now, error: 'made up' }], now })).moved).toEqual([]);
    expect((await message(id)).state).toBe('assigned');
  });

  it('takes `sending` as the acknowledgement: the message leaves the offers and a later `sent` applies', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const id = await claimedBy(apiKey, device);

    expect((await report(device.token, [{ id, status: 'sending' }])).json()).toEqual({ accepted: 1, rejected: [] });
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sending'), { timeout: 15_000 });
    expect(await claimIds(device.token)).toEqual([]);
    // A repeated acknowledgement changes nothing; the result applies.
    await report(device.token, [
      { id, status: 'sending' },
      { id, status: 'sent' },
    ]);
    await vi.waitFor(async () => expect((await message(id)).state).toBe('sent'), { timeout: 15_000 });
    expect(await eventStates(id)).toEqual(['assigned', 'sending', 'sent']);
  });

  it("fails the message with the device's error, or a default sentence without one", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    await startDispatcher();
    const withError = await claimedBy(apiKey, device);
    const withoutError = await claimedBy(apiKey, device);
    const at = new Date().toISOString();

    await report(device.token, [
      { id: withError, status: 'failed', error: 'SIM card has no credit', at },
      { id: withoutError, status: 'failed' },
    ]);
    await vi.waitFor(async () => expect((await message(withoutError)).state).toBe('failed'), { timeout: 15_000 });

    const failed = await message(withError);
    expect([failed.state, failed.error, failed.failedAt?.toISOString()]).toEqual(['failed', 'SIM card has no credit', at]);
    expect((await message(withoutError)).error).toBe('The device reported that sending failed.');
    const events = await api.db.messageEvent.findMany({ where: { messageId: withError, state: 'failed' } });
    expect(events.map((e) => [e.detail, e.deviceId])).toEqual([['SIM card has no credit', device.id]]);
  });

  it.each([
    ['an empty list', { reports: [] }],
    ['an unknown status', { reports: [{ id: randomUUID(), status: 'read' }] }],
    ['an unknown field', { reports: [{ id: randomUUID(), status: 'sent', extra: 1 }] }],
    ['a bad `at`', { reports: [{ id: randomUUID(), status: 'sent', at: 'yesterday' }] }],
    ['501 reports', { reports: Array.from({ length: 501 }, () => ({ id: randomUUID(), status: 'sent' })) }],
  ])('refuses %s with 400 invalid_request', async (_, payload) => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const res = await asDevice(devices[0]!.token, 'POST', '/api/v1/device/reports', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });
});
