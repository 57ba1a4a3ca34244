import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../../testing/test-api.ts';
import { twilioClient } from '../../../testing/twilio-client.ts';

/** The published `twilio` npm library against a listening smsgw. */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

async function account(apiKey: string) {
  const response = await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': apiKey } });
  expect(response.statusCode).toBe(200);
  return response.json() as { account_sid: string; messaging_service_sid: string; auth_token: string };
}

describe('twilio against smsgw', () => {
  it('creates a message with the Auth Token and fetches it', async () => {
    const u = await createTestUser(api.db);
    const a = await account(u.apiKey);
    expect(a.account_sid).toBe(`AC${u.userId.replaceAll('-', '')}`);
    expect(a.messaging_service_sid).toMatch(/^MG[0-9a-f]{32}$/);
    const client = twilioClient(baseUrl, a.account_sid, a.auth_token);
    const to = phone();
    const sent = await client.messages.create({ to, body: "Hello from Twilio's library", messagingServiceSid: a.messaging_service_sid });
    expect(sent).toMatchObject({
      to,
      body: "Hello from Twilio's library",
      status: 'queued',
      accountSid: a.account_sid,
      messagingServiceSid: a.messaging_service_sid,
      numSegments: '1',
      numMedia: '0',
      direction: 'outbound-api',
      apiVersion: '2010-04-01',
      errorCode: null,
      price: null,
      uri: `/2010-04-01/Accounts/${a.account_sid}/Messages/${sent.sid}.json`,
    });
    expect(sent.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(sent.dateCreated.getTime()).toBeGreaterThan(Date.now() - 60_000);
    const fetched = await client.messages(sent.sid).fetch();
    expect([fetched.sid, fetched.body, fetched.to]).toEqual([sent.sid, sent.body, to]);
    expect((await sendFootprint(api, u.userId)).quotaUsed).toBe(1);
  });

  it('takes an API key as the password, and refuses wrong credentials with 401 20003 and another account with 404 20404', async () => {
    const u = await createTestUser(api.db);
    const a = await account(u.apiKey);
    const client = twilioClient(baseUrl, a.account_sid, u.apiKey);
    expect((await client.messages.create({ to: phone(), body: 'by key' })).status).toBe('queued');
    await expect(twilioClient(baseUrl, a.account_sid, 'wrong').messages.list()).rejects.toMatchObject({ status: 401, code: 20003 });
    const other = await createTestUser(api.db);
    const b = await account(other.apiKey);
    await expect(twilioClient(baseUrl, a.account_sid, a.auth_token, b.account_sid).messages.list()).rejects.toMatchObject({ status: 404, code: 20404 });
    expect((await sendFootprint(api, other.userId)).messages).toBe(0);
  });

  it('rotates the Auth Token: the old one stops working', async () => {
    const u = await createTestUser(api.db);
    const a = await account(u.apiKey);
    const rotated = await api.app.inject({ method: 'POST', url: '/api/v1/twilio/auth-token', headers: { 'x-api-key': u.apiKey } });
    const b = rotated.json() as typeof a;
    expect([b.account_sid, b.messaging_service_sid]).toEqual([a.account_sid, a.messaging_service_sid]);
    expect(b.auth_token).not.toBe(a.auth_token);
    await expect(twilioClient(baseUrl, a.account_sid, a.auth_token).messages.list()).rejects.toMatchObject({ status: 401, code: 20003 });
    expect(await twilioClient(baseUrl, a.account_sid, b.auth_token).messages.list()).toEqual([]);
  });

  it('lists over several pages following next_page_uri, filtered by To', async () => {
    const u = await createTestUser(api.db);
    const a = await account(u.apiKey);
    const client = twilioClient(baseUrl, a.account_sid, a.auth_token);
    const to = phone();
    const sids: string[] = [];
    for (let i = 0; i < 5; i++) sids.push((await client.messages.create({ to, body: `n${i}` })).sid);
    await client.messages.create({ to: phone(), body: 'someone else' });
    const listed = await client.messages.list({ to, pageSize: 2 });
    expect(listed.map((m) => m.sid)).toEqual([...sids].reverse());
    const page = await client.messages.page({ to, pageSize: 2 });
    expect(page.instances).toHaveLength(2);
    const next = await page.nextPage();
    expect(next!.instances.map((m) => m.body)).toEqual(['n2', 'n1']);
  });

  it('cancels a scheduled message (refunded), redacts and deletes a final one', async () => {
    const u = await createTestUser(api.db);
    const a = await account(u.apiKey);
    const client = twilioClient(baseUrl, a.account_sid, a.auth_token);
    const sendAt = new Date(Date.now() + 3_600_000);
    const scheduled = await client.messages.create({ to: phone(), body: 'later', messagingServiceSid: a.messaging_service_sid, sendAt, scheduleType: 'fixed' });
    expect(scheduled.status).toBe('scheduled');
    expect((await sendFootprint(api, u.userId)).quotaUsed).toBe(1);
    await expect(client.messages(scheduled.sid).remove()).rejects.toMatchObject({ status: 400, code: 20009 });
    const canceled = await client.messages(scheduled.sid).update({ status: 'canceled' });
    expect(canceled.status).toBe('canceled');
    expect((await sendFootprint(api, u.userId)).quotaUsed).toBe(0);
    await expect(client.messages(scheduled.sid).update({ status: 'canceled' })).rejects.toMatchObject({ status: 400, code: 30409 });
    const redacted = await client.messages(scheduled.sid).update({ body: '' });
    expect(redacted.body).toBe('');
    expect(await client.messages(scheduled.sid).remove()).toBe(true);
    await expect(client.messages(scheduled.sid).fetch()).rejects.toMatchObject({ status: 404, code: 20404 });
  });
});
