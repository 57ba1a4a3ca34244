import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, sendFootprint, startTestApi, uniquePhone as phone, type TestApi } from '../../../testing/test-api.ts';
import { newerClient, publishedClient } from '../../../testing/sms-gate-client.ts';

/**
 * SMS Gate's published npm library (`android-sms-gateway` 3.0.0, Basic only) and the newer
 * client's requests (Bearer, list, cancel) against a listening smsgw.
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

describe('android-sms-gateway against smsgw', () => {
  it('sends by Basic with the user name and reads the state back with the same client', async () => {
    const u = await createTestUser(api.db);
    const client = publishedClient(baseUrl, u.user.name, u.apiKey);
    const to = phone();
    const sent = await client.send({
      id: null,
      message: "Hello from SMS Gate's library",
      phoneNumbers: [to],
      ttl: null,
      simNumber: null,
      withDeliveryReport: null,
    });
    expect(sent).toMatchObject({ state: 'Pending', recipients: [{ phoneNumber: to, state: 'Pending' }] });
    expect(await client.getState(sent.id)).toMatchObject({ id: sent.id, state: 'Pending', textMessage: { text: "Hello from SMS Gate's library" } });
    expect(await api.db.message.count({ where: { userId: u.userId } })).toBe(1);
  });

  it('takes the user id as the Basic login too, and refuses another login or a wrong key with 401 Unauthorized', async () => {
    const u = await createTestUser(api.db);
    expect(await publishedClient(baseUrl, u.userId, u.apiKey).getDevices()).toHaveLength(1);
    const other = await createTestUser(api.db);
    await expect(publishedClient(baseUrl, other.user.name, u.apiKey).getDevices()).rejects.toThrow('HTTP error 401: {"message":"Unauthorized"}');
    await expect(publishedClient(baseUrl, u.user.name, `${u.apiKey}x`).getDevices()).rejects.toThrow('HTTP error 401: {"message":"Unauthorized"}');
  });

  it('sends by Bearer as the newer client does, lists with X-Total-Count, and cancels', async () => {
    const u = await createTestUser(api.db);
    const client = newerClient(baseUrl, '', u.apiKey);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await client.send({ id: `bearer-${i}`, textMessage: { text: `n${i}` }, phoneNumbers: [phone(), phone()], scheduleAt: later })).id);
    expect(ids).toEqual(['bearer-0', 'bearer-1', 'bearer-2']);

    const page = await client.listMessages({ limit: 2, offset: 1, includeContent: true });
    expect(page.headers.get('x-total-count')).toBe('3');
    expect(((await page.json()) as { id: string; textMessage: unknown }[]).map((m) => [m.id, m.textMessage])).toEqual([
      ['bearer-1', { text: 'n1' }],
      ['bearer-0', { text: 'n0' }],
    ]);

    const used = (await sendFootprint(api, u.userId)).quotaUsed;
    expect(await client.cancelMessage('bearer-1')).toMatchObject({
      id: 'bearer-1',
      state: 'Cancelled',
      recipients: [{ state: 'Cancelled' }, { state: 'Cancelled' }],
    });
    expect((await sendFootprint(api, u.userId)).quotaUsed).toBe(used - 2);
    expect((await client.getState('bearer-1')).state).toBe('Cancelled');
    await expect(client.cancelMessage('bearer-1')).rejects.toThrow('HTTP error 409: {"message":"message is not pending"}');
    await expect(client.getState('nope')).rejects.toThrow('HTTP error 404: {"message":"message not found"}');
    const cancelled = await client.listMessages({ state: 'Cancelled' });
    expect([cancelled.headers.get('x-total-count'), ((await cancelled.json()) as { id: string }[]).map((m) => m.id)]).toEqual(['1', ['bearer-1']]);
  });

  it("answers health without credentials in SMS Gate's shape", async () => {
    const health = await publishedClient(baseUrl, 'nobody', 'nothing').getHealth();
    expect(health).toEqual({
      status: 'pass',
      checks: {
        'db:ping': { description: 'Postgres answers', observedUnit: 'boolean', observedValue: 1, status: 'pass' },
        'redis:ping': { description: 'Redis answers', observedUnit: 'boolean', observedValue: 1, status: 'pass' },
      },
    });
  });

  it('lists and deletes devices', async () => {
    const u = await createTestUser(api.db, { devices: 2 });
    const client = publishedClient(baseUrl, u.user.name, u.apiKey);
    const devices = await client.getDevices();
    expect(devices.map((d) => d.id).sort()).toEqual(u.devices.map((d) => d.id).sort());
    expect(devices[0]).toEqual({
      id: expect.any(String),
      name: expect.stringMatching(/^phone-/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      lastSeen: expect.any(String),
    });
    await client.deleteDevice(u.devices[0]!.id);
    expect((await client.getDevices()).map((d) => d.id)).toEqual([u.devices[1]!.id]);
    await expect(client.deleteDevice(u.devices[0]!.id)).rejects.toThrow('HTTP error 404: {"message":"device not found"}');
  });
});
