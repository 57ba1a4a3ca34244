import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiSchemas } from '@smsgw/client';
import { createTestUser, startTestApi, uniquePhone, type TestApi } from '@smsgw/api/testing';

/** The client generated from the OpenAPI document (openapi-typescript + openapi-fetch) against a listening API. */
let api: TestApi;
let client: ApiClient;
beforeAll(async () => {
  api = await startTestApi();
  const baseUrl = await api.app.listen({ port: 0, host: '127.0.0.1' });
  const { apiKey } = await createTestUser(api.db);
  client = createApiClient({ baseUrl, apiKey });
});
afterAll(async () => {
  await api?.close();
});

describe('createApiClient', () => {
  it('sends, reads one message and lists them filtered by recipient and batch', async () => {
    const [to, other] = [uniquePhone(), uniquePhone()];
    const sent = await client.POST('/api/sms/send', { body: { recipients: [to, other], body: 'Hello from the generated client' } });
    expect(sent.error).toBeUndefined();
    const accepted: ApiSchemas['SendAccepted'] = sent.data!;
    expect(accepted).toMatchObject({ status: 'accepted', recipients_count: 2 });
    expect(accepted.batch_id).toEqual(expect.any(String));

    const read = await client.GET('/api/v1/sms/{id}', { params: { path: { id: accepted.message_ids[0]! } } });
    const message: ApiSchemas['Message'] | undefined = read.data;
    expect(message).toMatchObject({ id: accepted.message_ids[0], to, message: 'Hello from the generated client', status: 'queued' });

    const list = await client.GET('/api/v1/sms', { params: { query: { to: other, batch_id: accepted.batch_id, status: 'queued', limit: 10 } } });
    expect(list.data?.total).toBe(1);
    expect(list.data?.data.map((m) => m.to)).toEqual([other]);
    expect(list.data).toMatchObject({ limit: 10, offset: 0 });
  });

  it('gives the error body, typed, for a message that does not exist and for a refused send', async () => {
    const missing = await client.GET('/api/v1/sms/{id}', { params: { path: { id: '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ error: 'not_found', message: 'Message not found' });

    const refused = await client.POST('/api/sms/send', { body: { recipients: ['0612345678'], body: 'x' } });
    expect(refused.response.status).toBe(400);
    expect(refused.error && 'error' in refused.error ? refused.error.error : undefined).toBe('invalid_phone_number');
  });

  it('is refused without a valid API key', async () => {
    const stranger = createApiClient({ baseUrl: api.app.listeningOrigin, apiKey: 'smsgw_sk_not-a-key' });
    const res = await stranger.GET('/api/v1/quota');
    expect(res.response.status).toBe(401);
    expect(res.error?.error).toBe('unauthorized');
  });
});
