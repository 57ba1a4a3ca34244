import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, countJobs, createTestUser, send, sendFootprint, startTestApi, uniquePhone, type TestApi } from '../testing/test-api.ts';
import { enrolConnectedPhone, phoneRequest, signedHeaders } from '../testing/test-phone.ts';

let api: TestApi;
beforeAll(async () => {
  // Webhook hosts resolve to a public address without DNS.
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.215.14'] });
});
afterAll(async () => {
  await api?.close();
});

const INVALID_PHONE = { error: 'invalid_phone_number', message: 'Phone number must be in E.164 format' };

/** An incoming SMS through the native protocol (`POST /api/v1/device/inbound`). */
async function nativeInbound(deviceToken: string, from: string, message: string) {
  const res = await api.app.inject({
    method: 'POST',
    url: '/api/v1/device/inbound',
    headers: { authorization: `Bearer ${deviceToken}` },
    payload: { messages: [{ id: randomUUID(), from, message, received_at: new Date().toISOString() }] },
  });
  expect(res.statusCode).toBe(202);
}

/** A user with an enrolled SMS Gate phone, and the phone's signed `sms:received` webhook. */
async function smsGateOwner() {
  const owner = await createTestUser(api.db, { devices: 0 });
  const phone = await enrolConnectedPhone(api.app, api.db, owner.userId);
  const auth = { authorization: `Bearer ${phone.token}` };
  const [webhook] = (await phoneRequest(api.app, 'GET', '/mobile/v1/webhooks', auth)).json();
  const signingKey: string = (await phoneRequest(api.app, 'GET', '/mobile/v1/settings', auth)).json().webhooks.signing_key;
  const receive = async (sender: string, message: string) => {
    const raw = JSON.stringify({
      id: randomUUID().slice(0, 21),
      webhookId: 'smsgw-x',
      event: 'sms:received',
      deviceId: phone.id,
      payload: {
        messageId: randomBytes(4).toString('hex'),
        message,
        sender,
        recipient: '+15551234567',
        simNumber: 1,
        receivedAt: new Date().toISOString(),
        phoneNumber: sender,
      },
    });
    const res = await phoneRequest(api.app, 'POST', new URL(webhook.url).pathname, { raw, headers: signedHeaders(signingKey, raw) });
    expect(res.statusCode).toBeLessThan(300);
  };
  return { ...owner, receive };
}

async function listed(apiKey: string): Promise<string[]> {
  const res = await call(api.app, apiKey, 'GET', '/api/v1/opt-outs?limit=100');
  expect(res.statusCode).toBe(200);
  return (res.json().data as { phone: string }[]).map((o) => o.phone);
}

async function failedDeliveries(userId: string) {
  return api.db.webhookDelivery.findMany({ where: { userId, type: 'message.failed' } });
}

describe('opt-out keywords from incoming SMS', () => {
  it('STOP through the native protocol lists the sender; a send to it is stored failed, uncharged and never queued; START lists it no more', async () => {
    const { apiKey, userId, devices } = await createTestUser(api.db);
    const to = uniquePhone();
    await nativeInbound(devices[0]!.token, to, '  stop\n');
    expect(await listed(apiKey)).toEqual([to]);
    const before = await sendFootprint(api, userId);

    const refused = await send(api.app, apiKey, { recipients: [to], body: 'hello' });

    expect(refused.statusCode).toBe(200);
    expect(refused.json()).toMatchObject({ recipients_count: 1, status: 'accepted', opted_out: [to] });
    const [id] = refused.json().message_ids as string[];
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms/${id}`)).json()).toMatchObject({ status: 'failed', error: 'recipient opted out', device_id: null });
    expect(await sendFootprint(api, userId)).toEqual({ ...before, messages: before.messages + 1 });

    await nativeInbound(devices[0]!.token, to, 'Start');
    expect(await listed(apiKey)).toEqual([]);
    const accepted = await send(api.app, apiKey, { recipients: [to], body: 'hello again' });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().opted_out).toBeUndefined();
  });

  it('STOP and START through the SMS Gate sms:received webhook keep the list the same way', async () => {
    const owner = await smsGateOwner();
    const to = uniquePhone();
    await owner.receive(to, 'UNSUBSCRIBE');
    expect(await listed(owner.apiKey)).toEqual([to]);
    const entry = (await call(api.app, owner.apiKey, 'GET', '/api/v1/opt-outs')).json().data[0];
    expect(entry).toEqual({ phone: to, source: 'keyword', created_at: expect.any(String) });

    await owner.receive(to, 'UNSTOP');
    expect(await listed(owner.apiKey)).toEqual([]);
  });

  it('takes the latest SMS of a sender in one batch, and a repeat of an SMS already stored changes nothing', async () => {
    const { apiKey, devices } = await createTestUser(api.db);
    const post = (messages: object[]) =>
      api.app.inject({ method: 'POST', url: '/api/v1/device/inbound', headers: { authorization: `Bearer ${devices[0]!.token}` }, payload: { messages } });
    const [a, b] = [uniquePhone(), uniquePhone()];
    const stopA = { id: randomUUID(), from: a, message: 'STOP', received_at: '2026-11-26T10:00:00.000Z' };
    const startA = { id: randomUUID(), from: a, message: 'START', received_at: '2026-11-26T10:00:05.000Z' };
    const startB = { id: randomUUID(), from: b, message: 'START', received_at: '2026-11-26T10:00:00.000Z' };
    const stopB = { id: randomUUID(), from: b, message: 'stop', received_at: '2026-11-26T10:00:05.000Z' };
    expect((await post([startA, stopA, startB, stopB])).statusCode).toBe(202);
    expect(await listed(apiKey)).toEqual([b]);

    await nativeInbound(devices[0]!.token, a, 'STOP');
    await nativeInbound(devices[0]!.token, a, 'START');
    // The device posts the first STOP again (a lost answer): stored once, it opts out no one.
    expect((await post([stopA])).json()).toMatchObject({ stored: 0, duplicates: 1 });
    expect(await listed(apiKey)).toEqual([b]);
  });

  it('never lists a sender that is not an E.164 number', async () => {
    const { apiKey, devices } = await createTestUser(api.db);
    await nativeInbound(devices[0]!.token, 'MYBANK', 'STOP');
    expect(await listed(apiKey)).toEqual([]);
  });

  it('ignores a keyword inside a longer text, and every keyword while the user turned them off', async () => {
    const { apiKey, devices } = await createTestUser(api.db);
    await nativeInbound(devices[0]!.token, uniquePhone(), 'please stop');
    expect(await listed(apiKey)).toEqual([]);

    expect((await call(api.app, apiKey, 'PATCH', '/api/v1/settings', { opt_out_keywords: false })).statusCode).toBe(200);
    await nativeInbound(devices[0]!.token, uniquePhone(), 'STOP');
    expect(await listed(apiKey)).toEqual([]);
  });
});

describe('a send with opted-out recipients', () => {
  it('stores their messages failed "recipient opted out", with message.failed, uncharged and never queued; the others go on', async () => {
    const { apiKey, userId } = await createTestUser(api.db, { monthlyQuota: 10 });
    const hook = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url: 'https://example.org/hooks', events: ['message.failed'] });
    expect(hook.statusCode).toBe(201);
    const [stopped, open] = [uniquePhone(), uniquePhone()];
    expect((await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: stopped })).statusCode).toBe(201);
    const jobsBefore = await countJobs(api.queue);

    const res = await send(api.app, apiKey, { recipients: [open, stopped], body: 'news' });

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ recipients_count: 2, status: 'accepted', opted_out: [stopped] });
    const [openId, stoppedId] = body.message_ids;
    const refused = await call(api.app, apiKey, 'GET', `/api/v1/sms/${stoppedId}`);
    expect(refused.json()).toMatchObject({ status: 'failed', state: 'failed', error: 'recipient opted out', device_id: null });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/sms/${openId}`)).json()).toMatchObject({ status: 'queued', state: 'pending' });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/quota')).json().used).toBe(1);
    expect(await countJobs(api.queue)).toBe(jobsBefore + 1);
    expect(await api.queue.getJob(stoppedId)).toBeUndefined();
    expect((await failedDeliveries(userId)).map((d) => d.messageId)).toEqual([stoppedId]);
  });

  it('replays the same response, opted_out included, for the same Idempotency-Key', async () => {
    const { apiKey } = await createTestUser(api.db);
    const stopped = uniquePhone();
    await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: stopped });
    const body = { recipients: [uniquePhone(), stopped], body: 'once' };
    const first = await send(api.app, apiKey, body, { 'idempotency-key': 'k1' });
    const again = await send(api.app, apiKey, body, { 'idempotency-key': 'k1' });
    expect(first.json().opted_out).toEqual([stopped]);
    expect({ replayed: again.headers['idempotency-replayed'], body: again.json() }).toEqual({ replayed: 'true', body: first.json() });
  });

  it('stores every message failed when every recipient opted out, needing no device and no quota, and queues nothing', async () => {
    const { apiKey, userId } = await createTestUser(api.db, { devices: 0, monthlyQuota: 0 });
    const [a, b] = [uniquePhone(), uniquePhone()];
    for (const phone of [a, b]) await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone });
    const before = await sendFootprint(api, userId);
    const res = await send(api.app, apiKey, { recipients: [a, b], body: 'x' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ recipients_count: 2, status: 'accepted', opted_out: [a, b] });
    expect(await sendFootprint(api, userId)).toEqual({ ...before, messages: before.messages + 2, batches: before.batches + 1 });
    const states = await api.db.message.findMany({ where: { userId }, select: { state: true, error: true } });
    expect(states).toEqual([
      { state: 'failed', error: 'recipient opted out' },
      { state: 'failed', error: 'recipient opted out' },
    ]);
  });
});

describe('/api/v1/opt-outs', () => {
  it('adds (201, then 200 with the same entry), lists newest first with paging, and deletes (204, then 404)', async () => {
    const { apiKey } = await createTestUser(api.db);
    const [a, b] = [uniquePhone(), uniquePhone()];
    const added = await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: a });
    expect({ status: added.statusCode, body: added.json() }).toEqual({ status: 201, body: { phone: a, source: 'api', created_at: expect.any(String) } });
    const again = await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: a });
    expect({ status: again.statusCode, body: again.json() }).toEqual({ status: 200, body: added.json() });
    await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: b });

    const first = await call(api.app, apiKey, 'GET', '/api/v1/opt-outs?limit=1');
    expect(first.json()).toEqual({ data: [expect.objectContaining({ phone: b })], total: 2, limit: 1, offset: 0 });
    const second = await call(api.app, apiKey, 'GET', '/api/v1/opt-outs?limit=1&offset=1');
    expect(second.json().data.map((o: { phone: string }) => o.phone)).toEqual([a]);

    expect((await call(api.app, apiKey, 'DELETE', `/api/v1/opt-outs/${encodeURIComponent(a)}`)).statusCode).toBe(204);
    const gone = await call(api.app, apiKey, 'DELETE', `/api/v1/opt-outs/${a}`);
    expect({ status: gone.statusCode, error: gone.json().error }).toEqual({ status: 404, error: 'not_found' });
    expect(await listed(apiKey)).toEqual([b]);
  });

  it.each(['15550001111', '+0123', '+1 555 000', ''])('refuses the phone %j with 400 invalid_phone_number and changes nothing', async (bad) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', { phone: bad });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: INVALID_PHONE });
    expect(await listed(apiKey)).toEqual([]);
  });

  it('refuses a bad body or query with 400 invalid_request, and a bad number to delete with 400', async () => {
    const { apiKey } = await createTestUser(api.db);
    for (const body of [{}, { phone: 15551234567 }, { phone: uniquePhone(), extra: 1 }]) {
      const res = await call(api.app, apiKey, 'POST', '/api/v1/opt-outs', body);
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_request' });
    }
    expect((await call(api.app, apiKey, 'GET', '/api/v1/opt-outs?limit=0')).statusCode).toBe(400);
    const res = await call(api.app, apiKey, 'DELETE', '/api/v1/opt-outs/12345');
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: INVALID_PHONE });
    expect(await listed(apiKey)).toEqual([]);
  });

  it("keeps each user's list apart: another user neither sees, deletes nor is refused by it", async () => {
    const [alice, bob] = [await createTestUser(api.db), await createTestUser(api.db)];
    const to = uniquePhone();
    await call(api.app, alice.apiKey, 'POST', '/api/v1/opt-outs', { phone: to });
    expect(await listed(bob.apiKey)).toEqual([]);
    expect((await call(api.app, bob.apiKey, 'DELETE', `/api/v1/opt-outs/${to}`)).statusCode).toBe(404);
    expect((await send(api.app, bob.apiKey, { recipients: [to], body: 'hi' })).statusCode).toBe(200);
    expect(await listed(alice.apiKey)).toEqual([to]);
  });

  it('needs authentication', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/opt-outs' });
    expect(res.statusCode).toBe(401);
  });
});

describe('/api/v1/settings', () => {
  it('shows the defaults and changes only the fields given', async () => {
    const { apiKey } = await createTestUser(api.db);
    expect((await call(api.app, apiKey, 'GET', '/api/v1/settings')).json()).toEqual({ opt_out_keywords: true, sticky_sender: false });
    const changed = await call(api.app, apiKey, 'PATCH', '/api/v1/settings', { sticky_sender: true });
    expect({ status: changed.statusCode, body: changed.json() }).toEqual({ status: 200, body: { opt_out_keywords: true, sticky_sender: true } });
    await call(api.app, apiKey, 'PATCH', '/api/v1/settings', { opt_out_keywords: false });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/settings')).json()).toEqual({ opt_out_keywords: false, sticky_sender: true });
  });

  it.each([[{}], [{ sticky_sender: 'true' }], [{ opt_out_keywords: 1 }], [{ sticky_sender: true, colour: 'red' }], [{ sticky_sender: null }]])(
    'refuses %j with 400 invalid_request and changes nothing',
    async (body) => {
      const { apiKey } = await createTestUser(api.db);
      const res = await call(api.app, apiKey, 'PATCH', '/api/v1/settings', body);
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_request' });
      expect((await call(api.app, apiKey, 'GET', '/api/v1/settings')).json()).toEqual({ opt_out_keywords: true, sticky_sender: false });
    },
  );
});
