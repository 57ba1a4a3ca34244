import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { call, createTestUser, send, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';
import { enrolConnectedPhone, phoneRequest } from '../../testing/test-phone.ts';

/** send_at, valid_until / ttl_seconds and sim_number on both send endpoints (decisions.md, "Scheduled sends and validity", "SIM choice"). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MESSAGE_TTL_SECONDS: '3600' });
});
afterAll(async () => {
  await api?.close();
});

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000);
const DAY = 86_400;

async function record(apiKey: string, id: string) {
  const res = await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`);
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function createTemplate(apiKey: string): Promise<string> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', { name: `t-${phone()}`, body: 'Code {{code}}' });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

describe('send_at, valid_until, ttl_seconds and sim_number', () => {
  it('stores them, shows them in the record and delays the dispatch job until send_at', async () => {
    const { apiKey } = await createTestUser(api.db);
    const sendAt = inSeconds(3600);
    const validUntil = inSeconds(7200);
    const res = await send(api.app, apiKey, {
      recipients: [phone(), phone()],
      body: 'later',
      send_at: sendAt.toISOString().replace('Z', '+00:00'),
      valid_until: validUntil.toISOString(),
      sim_number: 2,
    });
    expect(res.statusCode).toBe(200);
    const ids: string[] = res.json().message_ids;
    for (const id of ids) {
      expect(await record(apiKey, id)).toMatchObject({
        status: 'queued',
        state: 'pending',
        send_at: sendAt.toISOString(),
        valid_until: validUntil.toISOString(),
        sim_number: 2,
      });
      const job = await api.queue.getJob(id);
      expect(await job?.getState()).toBe('delayed');
      expect(job!.timestamp + job!.opts.delay!).toBeGreaterThanOrEqual(sendAt.getTime() - 1000);
      expect(job!.timestamp + job!.opts.delay!).toBeLessThanOrEqual(sendAt.getTime() + 1000);
    }
  });

  it('counts ttl_seconds from send_at, on send-template too', async () => {
    const { apiKey } = await createTestUser(api.db);
    const template = await createTemplate(apiKey);
    const sendAt = inSeconds(600);
    const res = await call(api.app, apiKey, 'POST', '/api/sms/send-template', {
      recipients: [phone()],
      template_id: template,
      variables: { code: '42' },
      send_at: sendAt.toISOString(),
      ttl_seconds: 120,
      sim_number: 3,
    });
    expect(res.statusCode).toBe(200);
    const shown = await record(apiKey, res.json().message_ids[0]);
    expect(shown).toMatchObject({
      message: 'Code 42',
      send_at: sendAt.toISOString(),
      valid_until: new Date(sendAt.getTime() + 120_000).toISOString(),
      sim_number: 3,
    });
  });

  it('accepts a scheduled send while no device is available (it needs one when due), and counts ttl_seconds from now without send_at', async () => {
    const { apiKey } = await createTestUser(api.db, { devices: 0 });
    expect((await send(api.app, apiKey, { recipients: [phone()], body: 'now' })).statusCode).toBe(503);
    const later = await send(api.app, apiKey, { recipients: [phone()], body: 'later', send_at: inSeconds(60).toISOString() });
    expect(later.statusCode).toBe(200);

    const withDevice = await createTestUser(api.db);
    const before = Date.now();
    const res = await send(api.app, withDevice.apiKey, { recipients: [phone()], body: 'otp', ttl_seconds: 30 });
    const shown = await record(withDevice.apiKey, res.json().message_ids[0]);
    expect(shown.send_at).toBeNull();
    expect(Date.parse(shown.valid_until)).toBeGreaterThanOrEqual(before + 30_000);
    expect(Date.parse(shown.valid_until)).toBeLessThanOrEqual(Date.now() + 30_000);
  });

  const BAD: [string, () => Record<string, unknown>, string][] = [
    ['a past send_at', () => ({ send_at: inSeconds(-60).toISOString() }), 'send_at'],
    ['a send_at of now', () => ({ send_at: new Date().toISOString() }), 'send_at'],
    ['a send_at more than a year ahead', () => ({ send_at: inSeconds(367 * DAY).toISOString() }), 'send_at'],
    ['a send_at without an offset', () => ({ send_at: inSeconds(3600).toISOString().replace('Z', '') }), 'send_at'],
    ['an absurd date (February 30)', () => ({ send_at: `${new Date().getUTCFullYear() + 1}-02-30T09:00:00Z` }), 'send_at'],
    ['an absurd date (year 275760)', () => ({ send_at: '+275760-09-13T00:00:00Z' }), 'send_at'],
    ['a send_at that is no date', () => ({ send_at: 'tomorrow' }), 'send_at'],
    ['a valid_until before send_at', () => ({ send_at: inSeconds(3600).toISOString(), valid_until: inSeconds(1800).toISOString() }), 'valid_until'],
    ['a past valid_until', () => ({ valid_until: inSeconds(-1).toISOString() }), 'valid_until'],
    ['both valid_until and ttl_seconds', () => ({ valid_until: inSeconds(600).toISOString(), ttl_seconds: 60 }), 'ttl_seconds'],
    ['a ttl_seconds of 0', () => ({ ttl_seconds: 0 }), 'ttl_seconds'],
    ['a ttl_seconds beyond MESSAGE_TTL_SECONDS', () => ({ ttl_seconds: 3601 }), 'ttl_seconds'],
    ['a sim_number of 0', () => ({ sim_number: 0 }), 'sim_number'],
    ['a sim_number of 4', () => ({ sim_number: 4 }), 'sim_number'],
    ['a sim_number as a string', () => ({ sim_number: '2' }), 'sim_number'],
    ['a sim_number of 1.5', () => ({ sim_number: 1.5 }), 'sim_number'],
  ];

  it.each(BAD)('refuses %s with 400 naming the field, and changes nothing', async (_, extra, field) => {
    const { userId, apiKey } = await createTestUser(api.db);
    const before = await sendFootprint(api, userId);
    const res = await send(api.app, apiKey, { recipients: [phone(), phone()], body: 'x', ...extra() });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining(field) });
    expect(await sendFootprint(api, userId)).toEqual(before);
  });

  it('refuses a bad sim_number on send-template too, before rendering anything', async () => {
    const { userId, apiKey } = await createTestUser(api.db);
    const before = await sendFootprint(api, userId);
    const res = await call(api.app, apiKey, 'POST', '/api/sms/send-template', {
      recipients: [phone()],
      template_id: await createTemplate(apiKey),
      sim_number: 4,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('sim_number');
    expect(await sendFootprint(api, userId)).toEqual(before);
  });
});

describe('on the device’s wire', () => {
  async function assignedMessage(deviceId: string, apiKey: string, extra: object): Promise<string> {
    const res = await send(api.app, apiKey, { recipients: [phone()], body: 'to the device', device_id: deviceId, ...extra });
    expect(res.statusCode).toBe(200);
    const id: string = res.json().message_ids[0];
    expect(await assignMessages(api.sql, { assignments: [{ id, deviceId }], now: new Date() })).toHaveLength(1);
    return id;
  }

  it('gives a native claim sim_number, and the message’s valid_until when it is earlier than smsgw’s own', async () => {
    const user = await createTestUser(api.db);
    const device = user.devices[0]!;
    const id = await assignedMessage(device.id, user.apiKey, { sim_number: 2, ttl_seconds: 120 });
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/device/messages', headers: { authorization: `Bearer ${device.token}` } });
    const validUntil = (await api.db.message.findUniqueOrThrow({ where: { id } })).validUntil!;
    expect(res.json().messages).toEqual([expect.objectContaining({ id, sim_number: 2, valid_until: validUntil.toISOString() })]);
  });

  it('gives an SMS Gate pull simNumber and validUntil; a message without a SIM has no simNumber key', async () => {
    const { userId, apiKey } = await createTestUser(api.db, { devices: 0 });
    const enrolled = await enrolConnectedPhone(api.app, api.db, userId);
    const withSim = await assignedMessage(enrolled.id, apiKey, { sim_number: 3, ttl_seconds: 300 });
    const withoutSim = await assignedMessage(enrolled.id, apiKey, {});
    const res = await phoneRequest(api.app, 'GET', '/mobile/v1/message?order=fifo', { authorization: `Bearer ${enrolled.token}` });
    const [first, second] = res.json();
    const validUntil = (await api.db.message.findUniqueOrThrow({ where: { id: withSim } })).validUntil!;
    expect(first).toMatchObject({ id: withSim, simNumber: 3, validUntil: validUntil.toISOString() });
    expect(second.id).toBe(withoutSim);
    expect(second).not.toHaveProperty('simNumber');
  });
});
