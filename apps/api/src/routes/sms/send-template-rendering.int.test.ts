import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { templateRequests } from '../../testing/template-requests.ts';
import { call, countJobs, createTestUser, send, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

/** POST /api/sms/send-template: how texts are rendered, the response, and group expansion (of /api/sms/send too). */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});
const { sendTemplate, createTemplate, createContact, createGroup, textsByRecipient } = templateRequests(() => api);

describe('POST /api/sms/send-template: rendering', () => {
  it("fills {{name}} from the recipient's contact, else variables.name, and {{phone}} per recipient", async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const ada = await createContact(apiKey, 'Ada');
    const grace = await createContact(apiKey, 'Grace');
    const stranger = phone();
    const templateId = await createTemplate(apiKey, 'Dear {{name}} at {{phone}}');

    const res = await sendTemplate(apiKey, { recipients: [ada, grace, stranger], template_id: templateId, variables: { name: 'customer' } });

    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({
      [ada]: `Dear Ada at ${ada}`,
      [grace]: `Dear Grace at ${grace}`,
      [stranger]: `Dear customer at ${stranger}`,
    });
  });

  it('fills {{name}} with the empty string for a number that is no contact when variables.name is absent', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const stranger = phone();
    const templateId = await createTemplate(apiKey, 'Hello {{name}}!');
    const res = await sendTemplate(apiKey, { recipients: [stranger], template_id: templateId });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({ [stranger]: 'Hello !' });
  });

  it("never takes {{name}} from another user's contact with the same number", async () => {
    const other = await createTestUser(api.db);
    const { apiKey, userId } = await createTestUser(api.db);
    const shared = await createContact(other.apiKey, 'Not yours');
    const templateId = await createTemplate(apiKey, 'Hello {{name}}');
    const res = await sendTemplate(apiKey, { recipients: [shared], template_id: templateId, variables: { name: 'fallback' } });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({ [shared]: 'Hello fallback' });
  });

  it('falls back to variables.name for a contact without a name (one made by adding a phone to a group)', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const p = phone();
    const groupId = await createGroup(apiKey, [p]);
    const templateId = await createTemplate(apiKey, 'Hello {{name}}');
    const res = await sendTemplate(apiKey, { recipients: [], group_ids: [groupId], template_id: templateId, variables: { name: 'member' } });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({ [p]: 'Hello member' });
  });

  it('ignores extra variables', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();
    const templateId = await createTemplate(apiKey, 'Code {{code}}');
    const res = await sendTemplate(apiKey, { recipients: [to], template_id: templateId, variables: { code: '123', unused: 'x', another: 'y' } });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({ [to]: 'Code 123' });
  });

  it('keeps a value containing {{phone}} (or another placeholder) literal: rendering is a single pass', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();
    const named = await createContact(apiKey, '{{code}}');
    const templateId = await createTemplate(apiKey, '{{name}}: {{note}} / {{phone}}');
    const res = await sendTemplate(apiKey, { recipients: [to, named], template_id: templateId, variables: { note: 'call {{phone}} {{code}}', code: 'X' } });
    expect(res.statusCode).toBe(200);
    expect(await textsByRecipient(userId)).toEqual({
      [to]: `: call {{phone}} {{code}} / ${to}`,
      [named]: `{{code}}: call {{phone}} {{code}} / ${named}`,
    });
  });

  it('refuses a rendered text of 1601 code points with 400 invalid_request and stores nothing', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, 'A{{x}}');
    const before = await sendFootprint(api, user.userId);
    const res = await sendTemplate(user.apiKey, { recipients: [phone()], template_id: templateId, variables: { x: '😀'.repeat(1600) } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining('1601') });
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });

  it("refuses the whole request when only one recipient's rendered text is over 1600 (a long contact name)", async () => {
    const user = await createTestUser(api.db);
    const longName = await createContact(user.apiKey, 'n'.repeat(10));
    const templateId = await createTemplate(user.apiKey, '{{name}}{{x}}');
    const before = await sendFootprint(api, user.userId);
    const res = await sendTemplate(user.apiKey, { recipients: [phone(), longName], template_id: templateId, variables: { x: 'é'.repeat(1591) } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(longName) });
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });

  it('accepts a rendered text of exactly 1600 code points and stores it intact', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();
    const templateId = await createTemplate(apiKey, 'A{{x}}');
    const res = await sendTemplate(apiKey, { recipients: [to], template_id: templateId, variables: { x: '😀'.repeat(1599) } });
    expect(res.statusCode).toBe(200);
    const row = await api.db.message.findFirstOrThrow({ where: { userId } });
    expect(row.body).toBe(`A${'😀'.repeat(1599)}`);
    expect(row.encoding).toBe('UCS_2');
  });

  it('refuses a rendered text that is empty with 400 invalid_request', async () => {
    const user = await createTestUser(api.db);
    const templateId = await createTemplate(user.apiKey, '{{x}}');
    const before = await sendFootprint(api, user.userId);
    const res = await sendTemplate(user.apiKey, { recipients: [phone()], template_id: templateId, variables: { x: '' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });

  it('stores each message with its own rendered text, segments and encoding', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const latin = await createContact(apiKey, 'Bob');
    const cyrillic = await createContact(apiKey, 'Борис');
    const templateId = await createTemplate(apiKey, 'Hi {{name}}');
    const res = await sendTemplate(apiKey, { recipients: [latin, cyrillic], template_id: templateId });
    expect(res.statusCode).toBe(200);
    const rows = await api.db.message.findMany({ where: { userId } });
    const byTo = Object.fromEntries(rows.map((r) => [r.to, { body: r.body, encoding: r.encoding, segments: r.segments }]));
    expect(byTo).toEqual({
      [latin]: { body: 'Hi Bob', encoding: 'GSM_7', segments: 1 },
      [cyrillic]: { body: 'Hi Борис', encoding: 'UCS_2', segments: 1 },
    });
    for (const id of res.json().message_ids) {
      const record = await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`);
      const row = rows.find((r) => r.id === id)!;
      expect(record.json()).toMatchObject({ id, message: row.body });
    }
  });
});

describe('POST /api/sms/send-template: the response', () => {
  it('answers {message_ids, recipients_count, status} without batch_id for one recipient', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const templateId = await createTemplate(apiKey, 'one');
    const res = await sendTemplate(apiKey, { recipients: [phone()], template_id: templateId });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ message_ids: [expect.any(String)], recipients_count: 1, status: 'accepted' });
    expect('batch_id' in body).toBe(false);
    expect(await sendFootprint(api, userId)).toMatchObject({ messages: 1, batches: 0, quotaUsed: 1 });
    expect((await api.queue.getJob(body.message_ids[0]))?.data).toEqual({ messageId: body.message_ids[0] });
  });

  it('answers with batch_id for more than one recipient, stores one batch and enqueues one job per message', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const templateId = await createTemplate(apiKey, 'many {{phone}}');
    const jobsBefore = await countJobs(api.queue);
    const res = await sendTemplate(apiKey, { recipients: [phone(), phone(), phone()], template_id: templateId });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['batch_id', 'message_ids', 'recipients_count', 'status']);
    expect(body).toMatchObject({ recipients_count: 3, status: 'accepted', batch_id: expect.any(String) });
    const rows = await api.db.message.findMany({ where: { userId } });
    expect(rows.map((r) => r.id).sort()).toEqual([...body.message_ids].sort());
    expect(new Set(rows.map((r) => r.batchId))).toEqual(new Set([body.batch_id]));
    expect(await countJobs(api.queue)).toBe(jobsBefore + 3);
    expect(await sendFootprint(api, userId)).toMatchObject({ messages: 3, batches: 1, quotaUsed: 3 });
  });
});

describe('group expansion (POST /api/sms/send and /api/sms/send-template)', () => {
  it.each(['send', 'send-template'] as const)('%s: de-duplicates overlapping groups and listed numbers', async (endpoint) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const [a, b, c, d] = [phone(), phone(), phone(), phone()];
    const g1 = await createGroup(apiKey, [a, b]);
    const g2 = await createGroup(apiKey, [b, c]);
    const templateId = await createTemplate(apiKey, 'to {{phone}}');
    const payload = { recipients: [c, d, d], group_ids: [g1, g2, g1] };

    const res =
      endpoint === 'send' ? await send(api.app, apiKey, { ...payload, body: 'same' }) : await sendTemplate(apiKey, { ...payload, template_id: templateId });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ recipients_count: 4, status: 'accepted', batch_id: expect.any(String) });
    expect(res.json().message_ids).toHaveLength(4);
    const texts = await textsByRecipient(userId);
    expect(Object.keys(texts).sort()).toEqual([a, b, c, d].sort());
    expect(await api.db.message.count({ where: { userId } })).toBe(4);
    if (endpoint === 'send-template') for (const p of [a, b, c, d]) expect(texts[p]).toBe(`to ${p}`);
  });

  it.each(['send', 'send-template'] as const)(
    '%s: sends to a group alone (empty recipients), and refuses an empty group with no recipients',
    async (endpoint) => {
      const user = await createTestUser(api.db);
      const members = [phone(), phone()];
      const full = await createGroup(user.apiKey, members);
      const empty = await createGroup(user.apiKey, []);
      const templateId = await createTemplate(user.apiKey, 'hey');
      const go = (groupId: string) =>
        endpoint === 'send'
          ? send(api.app, user.apiKey, { recipients: [], group_ids: [groupId], body: 'hey' })
          : sendTemplate(user.apiKey, { recipients: [], group_ids: [groupId], template_id: templateId });

      const before = await sendFootprint(api, user.userId);
      const none = await go(empty);
      expect(none.statusCode).toBe(400);
      expect(none.json().error).toBe('invalid_request');
      expect(await sendFootprint(api, user.userId)).toEqual(before);

      const res = await go(full);
      expect(res.statusCode).toBe(200);
      expect(res.json().recipients_count).toBe(2);
      expect(Object.keys(await textsByRecipient(user.userId)).sort()).toEqual([...members].sort());
    },
  );

  it("send: refuses another user's group with 400 group_not_found and stores nothing", async () => {
    const owner = await createTestUser(api.db);
    const user = await createTestUser(api.db);
    const theirs = await createGroup(owner.apiKey, [phone()]);
    const before = await sendFootprint(api, user.userId);
    const res = await send(api.app, user.apiKey, { recipients: [phone()], body: 'x', group_ids: [theirs] });
    expect(res.body).toBe(JSON.stringify({ error: 'group_not_found', message: `Group ${theirs} not found.` }));
    expect(res.statusCode).toBe(400);
    expect(await sendFootprint(api, user.userId)).toEqual(before);
  });

  it('send-template: a group of 10,000 members sends 10,000 messages in one request, each with its contact name', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const contacts = Array.from({ length: 10_000 }, (_, i) => ({ name: `Member ${i}`, phone: phone() }));
    const imported = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', contacts);
    expect(imported.json()).toEqual({ created: 10_000, updated: 0 });
    const groupId = await createGroup(
      apiKey,
      contacts.map((c) => c.phone),
    );
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${groupId}`)).json().member_count).toBe(10_000);
    const templateId = await createTemplate(apiKey, 'Hi {{name}}');

    const res = await sendTemplate(apiKey, { recipients: [contacts[0]!.phone], group_ids: [groupId], template_id: templateId });

    expect(res.statusCode).toBe(200);
    expect(res.json().recipients_count).toBe(10_000);
    expect(res.json().message_ids).toHaveLength(10_000);
    expect(await api.db.message.count({ where: { userId } })).toBe(10_000);
    const texts = await textsByRecipient(userId);
    expect(contacts.every((c) => texts[c.phone] === `Hi ${c.name}`)).toBe(true);
  });

  it('send: a group of 10,000 members sends 10,000 messages in one request', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const phones = Array.from({ length: 10_000 }, phone);
    const imported = await call(
      api.app,
      apiKey,
      'POST',
      '/api/v1/contacts/import',
      phones.map((p) => ({ name: 'm', phone: p })),
    );
    expect(imported.json()).toEqual({ created: 10_000, updated: 0 });
    const groupId = await createGroup(apiKey, phones);

    const res = await send(api.app, apiKey, { recipients: [], group_ids: [groupId], body: 'to all' });

    expect(res.statusCode).toBe(200);
    expect(res.json().recipients_count).toBe(10_000);
    expect(await api.db.message.count({ where: { userId } })).toBe(10_000);
  });
});
