import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countJobs, createTestUser, send, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

// MAX_RECIPIENTS is small so that too_many_recipients can be reached with a handful of numbers.
const MAX_RECIPIENTS = 3;

/** POST /api/sms/send refuses what it must, changing nothing, in the order of decisions.md (what it accepts: send.int.test.ts). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MAX_RECIPIENTS: String(MAX_RECIPIENTS) });
});
afterAll(async () => {
  await api?.close();
});

/** Sends `payload` and expects the refusal `status` + `body` with nothing stored, charged or enqueued. */
async function expectRefused(user: { apiKey: string; userId: string }, payload: unknown, status: number, body: unknown, headers: Record<string, string> = {}) {
  const before = await sendFootprint(api, user.userId);
  const res = await send(api.app, user.apiKey, payload, headers);
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body });
  expect(await sendFootprint(api, user.userId)).toEqual(before);
  return res;
}

async function userWithDevice(options: { monthlyQuota?: number | null; devices?: number } = {}) {
  const t = await createTestUser(api.db, options);
  return { ...t, userId: t.user.id };
}

const INVALID_PHONE = { error: 'invalid_phone_number', message: 'Phone number must be in E.164 format' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Authentication required' };
const QUOTA_EXCEEDED = { error: 'quota_exceeded', message: 'Monthly message quota exceeded' };
const NO_DEVICES = { error: 'no_devices', message: 'No devices available to send messages' };

describe('POST /api/sms/send refuses, changing nothing', () => {
  it.each([
    ['no country code plus sign', '15551234567'],
    ['a leading zero after the plus', '+0123'],
    ['16 digits', '+1234567890123456'],
    ['a space inside', '+1 555'],
    ['dashes', '+1-555-123-4567'],
    ['a single digit', '+1'],
    ['a leading space (not trimmed)', ' +15551234567'],
    ['a trailing space (not trimmed)', '+15551234567 '],
    ['an empty string', ''],
    ['letters', '+1555CALLNOW'],
  ])('400 invalid_phone_number for a number with %s, even among good ones', async (_name, bad) => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [phone(), bad, phone()], body: 'hi' }, 400, INVALID_PHONE);
  });

  it('401 unauthorized without credentials', async () => {
    const before = { messages: await api.db.message.count(), jobs: await countJobs(api.queue) };
    const res = await api.app.inject({ method: 'POST', url: '/api/sms/send', payload: { recipients: [phone()], body: 'hi' } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    expect({ messages: await api.db.message.count(), jobs: await countJobs(api.queue) }).toEqual(before);
  });

  it.each([
    ['an unknown X-API-Key', { 'x-api-key': `smsgw_sk_${randomBytes(32).toString('base64url')}` }],
    ['an unknown bearer key', { authorization: `Bearer smsgw_sk_${randomBytes(32).toString('base64url')}` }],
    ['a forged JWT', { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }],
    ['an empty X-API-Key', { 'x-api-key': '' }],
  ])('401 unauthorized with %s', async (_name, headers) => {
    const before = { messages: await api.db.message.count(), jobs: await countJobs(api.queue) };
    const res = await api.app.inject({ method: 'POST', url: '/api/sms/send', headers, payload: { recipients: [phone()], body: 'hi' } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
    expect({ messages: await api.db.message.count(), jobs: await countJobs(api.queue) }).toEqual(before);
  });

  it('401 unauthorized with a revoked API key', async () => {
    const { apiKey, userId } = await userWithDevice();
    await api.db.apiKey.updateMany({ where: { userId }, data: { revokedAt: new Date() } });
    await expectRefused({ apiKey, userId }, { recipients: [phone()], body: 'hi' }, 401, UNAUTHORIZED);
  });

  it('402 quota_exceeded when the monthly quota is used up', async () => {
    const user = await userWithDevice({ monthlyQuota: 0 });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 402, QUOTA_EXCEEDED);
  });

  it('503 no_devices when the user has no device', async () => {
    const user = await userWithDevice({ devices: 0 });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it('503 no_devices when the only device is disabled', async () => {
    const user = await userWithDevice();
    await api.db.device.update({ where: { id: user.deviceId! }, data: { enabled: false } });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it('503 no_devices when the only device was last seen longer ago than DEVICE_AVAILABLE_SECONDS', async () => {
    const user = await userWithDevice();
    const stale = new Date(Date.now() - (api.config.DEVICE_AVAILABLE_SECONDS + 60) * 1000);
    await api.db.device.update({ where: { id: user.deviceId! }, data: { lastSeenAt: stale } });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it('503 no_devices when the only device was never seen', async () => {
    const user = await userWithDevice();
    await api.db.device.update({ where: { id: user.deviceId! }, data: { lastSeenAt: null } });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it('503 no_devices when the only device is deleted', async () => {
    const user = await userWithDevice();
    await api.db.device.update({ where: { id: user.deviceId! }, data: { deletedAt: new Date(), enabled: false } });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it("503 no_devices when another user's device is the only available one", async () => {
    const user = await userWithDevice({ devices: 0 });
    await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });

  it('503 no_devices when the named device exists and is enabled but was not seen recently', async () => {
    const user = await userWithDevice({ devices: 2 });
    const devices = await api.db.device.findMany({ where: { userId: user.userId }, orderBy: { createdAt: 'asc' } });
    const stale = new Date(Date.now() - (api.config.DEVICE_AVAILABLE_SECONDS + 60) * 1000);
    await api.db.device.update({ where: { id: devices[1]!.id }, data: { lastSeenAt: stale } });
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: devices[1]!.id }, 503, NO_DEVICES);
  });

  it.each([
    ['recipients is missing', { body: 'hi' }, "'recipients'"],
    ['body is missing', { recipients: ['+15550000001'] }, "'body'"],
    ['body is empty', { recipients: ['+15550000001'], body: '' }, "'body'"],
    ['body is 1601 code points (emoji)', { recipients: ['+15550000001'], body: '😀'.repeat(1601) }, "'body'"],
    ['body is 1601 GSM-7 characters', { recipients: ['+15550000001'], body: 'a'.repeat(1601) }, "'body'"],
    ['a field is unknown', { recipients: ['+15550000001'], body: 'hi', sender: 'ACME' }, "'sender'"],
    ['recipients is a string (not coerced to an array)', { recipients: '+15550000001', body: 'hi' }, "'recipients'"],
    ['body is a number (not coerced to a string)', { recipients: ['+15550000001'], body: 42 }, "'body'"],
    ['body is a boolean', { recipients: ['+15550000001'], body: true }, "'body'"],
    ['body is null', { recipients: ['+15550000001'], body: null }, "'body'"],
    ['a recipient is a number', { recipients: [15550000001], body: 'hi' }, "'recipients[0]'"],
    ['device_id is a number', { recipients: ['+15550000001'], body: 'hi', device_id: 7 }, "'device_id'"],
    ['group_ids is a string', { recipients: ['+15550000001'], body: 'hi', group_ids: 'family' }, "'group_ids'"],
    ['recipients is empty and no group brings members', { recipients: [], body: 'hi' }, 'recipients'],
    ['the body is a JSON array', [], 'body'],
    ['body contains a NUL character (Postgres text cannot hold it)', { recipients: ['+15550000001'], body: 'a\u0000b' }, "'body'"],
    ['body contains an unpaired surrogate (it would be stored altered)', { recipients: ['+15550000001'], body: 'x\ud800y' }, "'body'"],
  ])('400 invalid_request naming the field when %s', async (_name, payload, named) => {
    const user = await userWithDevice();
    await expectRefused(user, payload, 400, { error: 'invalid_request', message: expect.stringContaining(named) });
  });

  it('400 invalid_request when the body is not JSON', async () => {
    const { apiKey, userId } = await userWithDevice();
    const before = await sendFootprint(api, userId);
    const res = await api.app.inject({
      method: 'POST',
      url: '/api/sms/send',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: '{"recipients": ["+15550000001"], "body": ',
    });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringContaining('JSON') },
    });
    expect(await sendFootprint(api, userId)).toEqual(before);
  });

  it('400 too_many_recipients above MAX_RECIPIENTS distinct numbers', async () => {
    const user = await userWithDevice();
    const recipients = Array.from({ length: MAX_RECIPIENTS + 1 }, phone);
    await expectRefused(user, { recipients, body: 'hi' }, 400, { error: 'too_many_recipients', message: expect.any(String) });
  });

  it.each([
    ['a uuid', randomUUID()],
    ['a name', 'family'],
  ])('400 group_not_found for a group_ids entry that is %s (no group exists yet)', async (_name, groupId) => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi', group_ids: [groupId] }, 400, {
      error: 'group_not_found',
      message: expect.any(String),
    });
  });

  it('400 group_not_found when group_ids is the only source of recipients', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [], body: 'hi', group_ids: [randomUUID()] }, 400, {
      error: 'group_not_found',
      message: expect.any(String),
    });
  });

  const DEVICE_NOT_FOUND = { error: 'device_not_found', message: expect.any(String) };

  it('400 device_not_found for a device_id that does not exist', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: randomUUID() }, 400, DEVICE_NOT_FOUND);
  });

  it.each([['not-a-uuid'], [''], ["1' OR '1'='1"]])('400 device_not_found for a malformed device_id %j', async (deviceId) => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: deviceId }, 400, DEVICE_NOT_FOUND);
  });

  it("400 device_not_found for another user's device, like one that does not exist", async () => {
    const user = await userWithDevice();
    const other = await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: other.deviceId }, 400, DEVICE_NOT_FOUND);
    expect(await api.db.message.count({ where: { userId: other.userId } })).toBe(0);
  });

  it('400 device_not_found for a disabled device, even when another device is available', async () => {
    const user = await userWithDevice({ devices: 2 });
    await api.db.device.update({ where: { id: user.deviceId! }, data: { enabled: false } });
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: user.deviceId }, 400, DEVICE_NOT_FOUND);
  });

  it('400 device_not_found for a deleted device', async () => {
    const user = await userWithDevice({ devices: 2 });
    const del = await api.app.inject({ method: 'DELETE', url: `/api/v1/devices/${user.deviceId}`, headers: { 'x-api-key': user.apiKey } });
    expect(del.statusCode).toBeLessThan(300);
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: user.deviceId }, 400, DEVICE_NOT_FOUND);
  });
});

describe('POST /api/sms/send checks in the order of decisions.md', () => {
  it('authentication before the request shape: bad credentials and a non-JSON body give 401', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/api/sms/send',
      headers: { 'x-api-key': 'wrong', 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('authentication before the request shape: no credentials and an invalid body give 401', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/sms/send', payload: { recipients: 'x', body: 1 } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('request shape before numbers: an empty body and a bad number give invalid_request', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: ['123'], body: '' }, 400, { error: 'invalid_request', message: expect.stringContaining("'body'") });
  });

  it('request shape before numbers: a body with a NUL character and a bad number give invalid_request', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: ['123'], body: 'a\u0000b' }, 400, {
      error: 'invalid_request',
      message: expect.stringContaining("'body'"),
    });
  });

  it('numbers before groups: a bad number and an unknown group give invalid_phone_number', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: ['123'], body: 'hi', group_ids: [randomUUID()] }, 400, INVALID_PHONE);
  });

  it('numbers before the recipient limit: too many numbers with one bad give invalid_phone_number', async () => {
    const user = await userWithDevice();
    const recipients = [...Array.from({ length: MAX_RECIPIENTS + 1 }, phone), '123'];
    await expectRefused(user, { recipients, body: 'hi' }, 400, INVALID_PHONE);
  });

  it('numbers before the named device: a bad number and an unknown device give invalid_phone_number', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: ['123'], body: 'hi', device_id: randomUUID() }, 400, INVALID_PHONE);
  });

  it('numbers before availability: a bad number and no devices give invalid_phone_number', async () => {
    const user = await userWithDevice({ devices: 0 });
    await expectRefused(user, { recipients: [phone(), '+0123'], body: 'hi' }, 400, INVALID_PHONE);
  });

  it('numbers before the quota: a bad number and an exhausted quota give invalid_phone_number', async () => {
    const user = await userWithDevice({ monthlyQuota: 0 });
    await expectRefused(user, { recipients: ['+1 555'], body: 'hi' }, 400, INVALID_PHONE);
  });

  it('groups before the named device: an unknown group and an unknown device give group_not_found', async () => {
    const user = await userWithDevice();
    await expectRefused(user, { recipients: [phone()], body: 'hi', group_ids: [randomUUID()], device_id: randomUUID() }, 400, {
      error: 'group_not_found',
      message: expect.any(String),
    });
  });

  it('recipient limit before availability: too many recipients and no devices give too_many_recipients', async () => {
    const user = await userWithDevice({ devices: 0 });
    const recipients = Array.from({ length: MAX_RECIPIENTS + 1 }, phone);
    await expectRefused(user, { recipients, body: 'hi' }, 400, { error: 'too_many_recipients', message: expect.any(String) });
  });

  it('named device before the quota: an unknown device and an exhausted quota give device_not_found', async () => {
    const user = await userWithDevice({ monthlyQuota: 0 });
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: randomUUID() }, 400, {
      error: 'device_not_found',
      message: expect.any(String),
    });
  });

  it('named device before availability: an unknown device and no devices give device_not_found', async () => {
    const user = await userWithDevice({ devices: 0 });
    await expectRefused(user, { recipients: [phone()], body: 'hi', device_id: randomUUID() }, 400, {
      error: 'device_not_found',
      message: expect.any(String),
    });
  });

  it('availability before the quota (quota is last): no devices and an exhausted quota give 503 no_devices', async () => {
    const user = await userWithDevice({ devices: 0, monthlyQuota: 0 });
    await expectRefused(user, { recipients: [phone()], body: 'hi' }, 503, NO_DEVICES);
  });
});
