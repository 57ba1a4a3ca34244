import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assignMessages } from '@smsgw/db';
import { templateRequests } from '../../testing/template-requests.ts';
import { call, createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

/** POST /api/sms/send-template: the texts reach the device, and its errors (rendering: send-template-rendering.int.test.ts). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});
const { sendTemplate, createTemplate, createContact, createGroup, expectRefusedExactly, textsByRecipient } = templateRequests(() => api);

describe('POST /api/sms/send-template: the rendered texts reach the device', () => {
  it('a device claiming its messages receives each recipient its own rendered text', async () => {
    const { apiKey, userId, devices } = await createTestUser(api.db, { devices: 1 });
    const device = devices[0]!;
    const ada = await createContact(apiKey, 'Ada');
    const stranger = phone();
    const templateId = await createTemplate(apiKey, 'Hi {{name}}, code {{code}} for {{phone}}');

    const res = await sendTemplate(apiKey, { recipients: [ada, stranger], template_id: templateId, variables: { code: '4711', name: 'friend' } });
    expect(res.statusCode).toBe(200);
    const ids: string[] = res.json().message_ids;
    // What the dispatcher does (its own tests cover it): the messages are assigned to the device.
    await assignMessages(api.sql, { assignments: ids.map((id) => ({ id, deviceId: device.id })), now: new Date() });

    const claimed = new Map<string, { to: string; message: string }>();
    await vi.waitFor(
      async () => {
        const got = await api.app.inject({ method: 'GET', url: '/api/v1/device/messages', headers: { authorization: `Bearer ${device.token}` } });
        expect(got.statusCode).toBe(200);
        for (const m of got.json().messages as { id: string; to: string; message: string }[]) claimed.set(m.id, { to: m.to, message: m.message });
        expect(claimed.size).toBe(2);
      },
      { timeout: 15_000, interval: 100 },
    );

    expect([...claimed.keys()].sort()).toEqual([...ids].sort());
    expect(Object.fromEntries([...claimed.values()].map((m) => [m.to, m.message]))).toEqual({
      [ada]: `Hi Ada, code 4711 for ${ada}`,
      [stranger]: `Hi friend, code 4711 for ${stranger}`,
    });
    expect(await textsByRecipient(userId)).toEqual({ [ada]: `Hi Ada, code 4711 for ${ada}`, [stranger]: `Hi friend, code 4711 for ${stranger}` });
  });
});

describe('POST /api/sms/send-template: the spec errors, byte for byte', () => {
  it('answers {"message":"Template not found."} for a template id that does not exist', async () => {
    const user = await createTestUser(api.db);
    await expectRefusedExactly(user, { recipients: [phone()], template_id: randomUUID() }, 400, '{"message":"Template not found."}');
  });

  it('answers {"message":"Template not found."} for a malformed template id', async () => {
    const user = await createTestUser(api.db);
    await expectRefusedExactly(user, { recipients: [phone()], template_id: 'not-a-uuid' }, 400, '{"message":"Template not found."}');
    await expectRefusedExactly(user, { recipients: [phone()], template_id: '' }, 400, '{"message":"Template not found."}');
  });

  it('answers {"message":"Template not found."} for a deleted template', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, 'gone');
    expect((await call(api.app, user.apiKey, 'DELETE', `/api/v1/templates/${templateId}`)).statusCode).toBe(204);
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId }, 400, '{"message":"Template not found."}');
  });

  it('answers {"message":"Template does not belong to user."} for another user\'s template', async () => {
    const owner = await createTestUser(api.db);
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(owner.apiKey, 'Hello {{name}}');
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId }, 400, '{"message":"Template does not belong to user."}');
    expect(await api.db.message.count({ where: { userId: owner.userId } })).toBe(0);
  });

  it('answers {"message":"Missing variable: code."} for the first missing variable in template order', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, '{{a}} {{name}} {{code}} {{b}} {{zz}}');
    await expectRefusedExactly(
      user,
      { recipients: [phone()], template_id: templateId, variables: { a: '1', zz: '2' } },
      400,
      '{"message":"Missing variable: code."}',
    );
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId }, 400, '{"message":"Missing variable: a."}');
  });

  it('answers {"message":"Missing variable: toString."} for {{toString}} with no such variable', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, 'Value: {{toString}}');
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId, variables: {} }, 400, '{"message":"Missing variable: toString."}');
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId }, 400, '{"message":"Missing variable: toString."}');
  });

  it('answers {"message":"Missing variable: constructor."} for {{constructor}} with no such variable', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, '{{constructor}}');
    await expectRefusedExactly(
      user,
      { recipients: [phone()], template_id: templateId, variables: { other: 'x' } },
      400,
      '{"message":"Missing variable: constructor."}',
    );
  });

  it('renders {{toString}} when the caller gives it', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();
    const templateId = await createTemplate(apiKey, 'Value: {{toString}}');
    const res = await sendTemplate(apiKey, { recipients: [to], template_id: templateId, variables: { toString: 'given' } });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({ [to]: 'Value: given' });
  });

  it('checks the template before device availability: a user with no device still gets the template errors', async () => {
    const user = await createTestUser(api.db, { devices: 0 });
    await expectRefusedExactly(user, { recipients: [phone()], template_id: randomUUID() }, 400, '{"message":"Template not found."}');
    const templateId = await createTemplate(user.apiKey, '{{code}}');
    await expectRefusedExactly(user, { recipients: [phone()], template_id: templateId }, 400, '{"message":"Missing variable: code."}');
  });
});

describe('POST /api/sms/send-template: the other send errors', () => {
  it('refuses a recipient that is not E.164 with 400 invalid_phone_number', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, 'hi');
    await expectRefusedExactly(
      user,
      { recipients: [phone(), '5550001'], template_id: templateId },
      400,
      '{"error":"invalid_phone_number","message":"Phone number must be in E.164 format"}',
    );
  });

  it('refuses missing or wrong credentials with 401 unauthorized', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, 'hi');
    for (const headers of [{}, { 'x-api-key': 'sk_wrong' }]) {
      const res = await api.app.inject({ method: 'POST', url: '/api/sms/send-template', headers, payload: { recipients: [phone()], template_id: templateId } });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: { error: 'unauthorized', message: 'Authentication required' } });
    }
    expect(await sendFootprint(api, user.userId)).toMatchObject({ messages: 0, quotaUsed: 0 });
  });

  it("refuses another user's group, an unknown and a malformed group id with 400 group_not_found", async () => {
    const owner = await createTestUser(api.db);
    const user = await createTestUser(api.db);
    const theirs = await createGroup(owner.apiKey, [phone()]);
    const templateId = await createTemplate(user.apiKey, 'hi {{name}}');
    for (const groupId of [theirs, randomUUID(), 'nope']) {
      await expectRefusedExactly(
        user,
        { recipients: [phone()], template_id: templateId, group_ids: [groupId] },
        400,
        JSON.stringify({ error: 'group_not_found', message: `Group ${groupId} not found.` }),
      );
    }
  });

  it('refuses a user with no available device with 503 no_devices', async () => {
    const user = await createTestUser(api.db, { devices: 0 });
    const templateId = await createTemplate(user.apiKey, 'hi');
    await expectRefusedExactly(
      user,
      { recipients: [phone()], template_id: templateId },
      503,
      '{"error":"no_devices","message":"No devices available to send messages"}',
    );
  });

  it('refuses a request the quota cannot cover whole with 402 quota_exceeded', async () => {
    const user = await createTestUser(api.db, { monthlyQuota: 2 });
    const templateId = await createTemplate(user.apiKey, 'hi {{phone}}');
    await expectRefusedExactly(
      user,
      { recipients: [phone(), phone(), phone()], template_id: templateId },
      402,
      '{"error":"quota_exceeded","message":"Monthly message quota exceeded"}',
    );
    const res = await sendTemplate(user.apiKey, { recipients: [phone(), phone()], template_id: templateId });
    expect(res.statusCode).toBe(200);
  });

  it.each([
    ['a non-string variable', { variables: { code: 5 } }],
    ['an unknown field', { body: 'x' }],
    ['recipients that are not an array', { recipients: '+15550001111' }],
  ])('refuses %s with 400 invalid_request', async (_what, extra) => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, '{{code}}');
    const before = await sendFootprint(api, user.userId);
    const res = await sendTemplate(user.apiKey, { recipients: [phone()], template_id: templateId, variables: { code: '1' }, ...extra });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });
});
