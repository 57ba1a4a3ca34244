import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createTestUser } from '@smsgw/api/testing';
import { createWebhook, updateWebhook } from '@smsgw/db';
import { cliOnApi, failure, ok } from './testing/run-cli.ts';

// The CLI against the database and queues of a running API.
const cli = cliOnApi();
const { smsgw, smsgwWith } = cli;

async function webhookOf(userId: string, events = ['message.sent']) {
  return (await createWebhook(cli.api.db, { userId, url: `https://hooks.example/${randomUUID()}`, events, limit: 20 })).webhook;
}

describe('smsgw webhook list', () => {
  it('lists as GET /api/v1/webhooks does, with its paging', async () => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    await webhookOf(user.userId);
    await webhookOf(user.userId, ['message.delivered', 'message.failed']);

    for (const [flags, query] of [
      [[], ''],
      [['--limit', '1', '--offset', '1'], '?limit=1&offset=1'],
    ] as const) {
      const out = ok(await smsgw('webhook', 'list', '--user', user.user.name, ...flags));
      expect(out).toEqual((await call(cli.api.app, user.apiKey, 'GET', `/api/v1/webhooks${query}`)).json());
    }
  });
});

describe('smsgw webhook test', () => {
  it('stores a webhook.test delivery and enqueues it, as POST /api/v1/webhooks/:id/test does', async () => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    const webhook = await webhookOf(user.userId);

    const out = ok(await smsgw('webhook', 'test', '--user', user.userId, '--webhook', webhook.id));
    const fromApi = (await call(cli.api.app, user.apiKey, 'POST', `/api/v1/webhooks/${webhook.id}/test`)).json();
    const comparable = (delivery: Record<string, unknown>) => ({ ...delivery, id: 'id', created_at: 'at', next_attempt_at: 'at' });
    expect(comparable(out)).toEqual(comparable(fromApi));
    expect(out).toMatchObject({ type: 'webhook.test', state: 'pending', attempts: 0, message_id: null });

    const row = await cli.api.db.webhookDelivery.findUniqueOrThrow({ where: { id: out.id as string } });
    expect({ webhookId: row.webhookId, type: row.type }).toEqual({ webhookId: webhook.id, type: 'webhook.test' });
    const job = await cli.api.app.webhooksQueue.getJob(out.id as string);
    expect({ name: job?.name, data: job?.data }).toEqual({ name: 'webhook.deliver', data: { deliveryId: out.id, webhookId: webhook.id } });
  });

  it('refuses a disabled endpoint (409 webhook_disabled → exit 4), storing nothing', async () => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    const webhook = await webhookOf(user.userId);
    await updateWebhook(cli.api.db, { userId: user.userId, id: webhook.id, enabled: false });

    const fromApi = await call(cli.api.app, user.apiKey, 'POST', `/api/v1/webhooks/${webhook.id}/test`);
    expect(fromApi.statusCode).toBe(409);
    expect(failure(await smsgw('webhook', 'test', '--user', user.userId, '--webhook', webhook.id))).toEqual({ code: 4, ...fromApi.json() });
    expect(await cli.api.db.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
  });

  it("exits 3 for another user's endpoint or an unknown id, 2 without --webhook", async () => {
    const owner = await createTestUser(cli.api.db, { devices: 0 });
    const theirs = await webhookOf(owner.userId);
    const user = await createTestUser(cli.api.db, { devices: 0 });
    for (const id of [theirs.id, 'nope']) {
      expect(failure(await smsgw('webhook', 'test', '--user', user.userId, '--webhook', id))).toEqual({
        code: 3,
        error: 'not_found',
        message: `no webhook with id ${id} for user ${user.userId}`,
      });
    }
    expect(failure(await smsgw('webhook', 'test', '--user', user.userId))).toEqual({ code: 2, error: 'usage', message: '--webhook is required' });
    expect(await cli.api.db.webhookDelivery.count({ where: { webhookId: theirs.id } })).toBe(0);
  });

  it('exits 5 naming REDIS_URL when Redis cannot be reached, storing nothing', async () => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    const webhook = await webhookOf(user.userId);
    const refused = failure(await smsgwWith({ REDIS_URL: 'redis://127.0.0.1:1' }, 'webhook', 'test', '--user', user.userId, '--webhook', webhook.id));
    expect(refused).toMatchObject({ code: 5, error: 'redis_unavailable', message: expect.stringContaining('REDIS_URL') });
    expect(await cli.api.db.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
  });
});
