import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendelAPIError, VendelClient } from 'vendel-sdk';
import { createTestUser, startTestApi, uniquePhone as phone, type TestApi } from '../../testing/test-api.ts';

/**
 * The published Vendel SDK (`vendel-sdk`), which the `/api/sms/*` and `/api/plans/quota` routes
 * exist for, against a listening API: send, send a template, read the quota, and its errors.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  api = await startTestApi();
  baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

async function user(monthlyQuota?: number) {
  const u = await createTestUser(api.db, monthlyQuota === undefined ? {} : { monthlyQuota });
  return { ...u, client: new VendelClient({ baseUrl, apiKey: u.apiKey }) };
}

describe('vendel-sdk against smsgw', () => {
  it('sends to several recipients: the answer has what the SDK types say', async () => {
    const { client, userId } = await user();
    const result = await client.sendSms([phone(), phone()], 'Hello from the Vendel SDK');
    expect(result).toEqual({ batch_id: expect.any(String), message_ids: [expect.any(String), expect.any(String)], recipients_count: 2, status: 'accepted' });
    expect(await api.db.message.count({ where: { userId } })).toBe(2);
  });

  it('sends a template with variables', async () => {
    const { client, apiKey, userId } = await user();
    const created = await api.app.inject({
      method: 'POST',
      url: '/api/v1/templates',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'otp', body: 'Your code is {{code}}' },
    });
    const templateId = created.json().id as string;
    const result = await client.sendSmsTemplate([phone()], templateId, { variables: { code: '4711' } });
    expect(result).toMatchObject({ message_ids: [expect.any(String)], recipients_count: 1, status: 'accepted' });
    const message = await api.db.message.findFirstOrThrow({ where: { userId } });
    expect(message.body).toBe('Your code is 4711');
  });

  it('reads the quota with every field the SDK declares', async () => {
    const { client } = await user(50);
    await client.sendSms([phone(), phone(), phone()], 'three');
    const quota = await client.getQuota();
    expect(quota).toMatchObject({
      plan: 'self-hosted',
      sms_sent_this_month: 3,
      max_sms_per_month: 50,
      devices_registered: 1,
      reset_date: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(quota.reset_date))).toBe(false);
  });

  it("raises VendelAPIError with smsgw's status and message for a refused request", async () => {
    const { client } = await user();
    const error = await client.sendSms(['12345'], 'not E.164').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendelAPIError);
    expect(error).toMatchObject({ statusCode: 400, detail: { error: 'invalid_phone_number' } });
  });

  it('raises VendelAPIError 402 when the quota is spent', async () => {
    const { client } = await user(1);
    const error = await client.sendSms([phone(), phone()], 'over').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendelAPIError);
    expect(error).toMatchObject({ statusCode: 402, detail: { error: 'quota_exceeded', message: 'Monthly message quota exceeded' } });
  });

  it('raises VendelAPIError 401 for a wrong key', async () => {
    const client = new VendelClient({ baseUrl, apiKey: 'smsgw_sk_wrong' });
    await expect(client.getQuota()).rejects.toMatchObject({ statusCode: 401 });
  });
});
