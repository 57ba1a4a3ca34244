import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishUserEvents, usersListening, type UserEvent } from '@smsgw/queue';
import { call, createTestUser, send, startTestApi, uniquePhone, type TestApi } from '../testing/test-api.ts';
import { MAX_STREAMS_PER_USER } from './events.ts';

let api: TestApi;
let base: string;
beforeAll(async () => {
  api = await startTestApi();
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await api?.close();
});

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** An open stream of the caller's events, read frame by frame. */
async function openStream(credential: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/v1/events`, { headers: { authorization: `Bearer ${credential}` }, signal: controller.signal });
  const frames: Frame[] = [];
  let comments = 0;
  let buffer = '';
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(':')) comments++;
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) frames.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  return {
    res,
    frames,
    get comments() {
      return comments;
    },
    close: async () => {
      controller.abort();
      await reading;
    },
    waitFor: (predicate: (frames: Frame[]) => boolean) => vi.waitFor(() => expect(predicate(frames), JSON.stringify(frames)).toBe(true), { timeout: 5000 }),
  };
}

const status = (id: string, state: 'sent' | 'delivered'): UserEvent => ({
  type: 'message.status',
  data: {
    id,
    status: state,
    state,
    batch_id: null,
    device_id: null,
    error: null,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    sent_at: null,
    delivered_at: null,
    failed_at: null,
  },
});

describe('GET /api/v1/events', () => {
  it('refuses a request without credentials with a JSON 401', async () => {
    const res = await fetch(`${base}/api/v1/events`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('streams the user’s own events, and none of another user', async () => {
    const alice = await createTestUser(api.db);
    const bob = await createTestUser(api.db);
    const stream = await openStream(alice.apiKey);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.waitFor(() => stream.comments > 0); // the greeting: the subscription is in place
    const a = crypto.randomUUID();
    const b = crypto.randomUUID();
    await publishUserEvents(api.app.redis, api.config.QUEUE_PREFIX, [
      { userId: bob.userId, event: status(crypto.randomUUID(), 'sent') },
      { userId: alice.userId, event: status(a, 'sent') },
      { userId: alice.userId, event: status(b, 'delivered') },
    ]);
    await stream.waitFor((frames) => frames.length >= 2);
    await publishUserEvents(api.app.redis, api.config.QUEUE_PREFIX, [{ userId: alice.userId, event: { type: 'sms.received', data: { id: 'x' } } }]);
    await stream.waitFor((frames) => frames.length >= 3);
    expect(stream.frames.map((f) => [f.event, f.data.id, f.data.status])).toEqual([
      ['message.status', a, 'sent'],
      ['message.status', b, 'delivered'],
      ['sms.received', 'x', undefined],
    ]);
    await stream.close();
  });

  it('tells of messages accepted by a send, as queued, with a JWT as credential', async () => {
    const user = await createTestUser(api.db);
    const token = (await call(api.app, user.apiKey, 'POST', '/api/v1/auth/token')).json().token as string;
    const stream = await openStream(token);
    await stream.waitFor(() => stream.comments > 0);
    const res = await send(api.app, user.apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'hello' });
    const { message_ids: ids, batch_id: batchId } = res.json() as { message_ids: string[]; batch_id: string };
    await stream.waitFor((frames) => frames.length >= 2);
    expect(stream.frames.map((f) => f.data.id).sort()).toEqual([...ids].sort());
    expect(stream.frames.every((f) => f.event === 'message.status' && f.data.status === 'queued' && f.data.batch_id === batchId)).toBe(true);
    await stream.close();
  });

  it('tells of a message to an opted-out recipient as failed, and of the others as queued', async () => {
    const user = await createTestUser(api.db);
    const stopped = uniquePhone();
    expect((await call(api.app, user.apiKey, 'POST', '/api/v1/opt-outs', { phone: stopped })).statusCode).toBe(201);
    const stream = await openStream(user.apiKey);
    await stream.waitFor(() => stream.comments > 0);
    const res = await send(api.app, user.apiKey, { recipients: [uniquePhone(), stopped], body: 'hello' });
    const [queued, failed] = res.json().message_ids as string[];
    await stream.waitFor((frames) => frames.length >= 2);
    const byId = new Map(stream.frames.map((f) => [f.data.id, f.data]));
    expect(byId.get(queued)).toMatchObject({ status: 'queued', state: 'pending', error: null });
    expect(byId.get(failed)).toMatchObject({ status: 'failed', state: 'failed', error: 'recipient opted out', failed_at: expect.any(String) });
    await stream.close();
  });

  it('tells of an SMS a device received, once, however often the device repeats it', async () => {
    const user = await createTestUser(api.db);
    const stream = await openStream(user.apiKey);
    await stream.waitFor(() => stream.comments > 0);
    const sms = { id: 'sms-1', from: '+15550007777', message: 'hello back', received_at: new Date().toISOString() };
    for (let i = 0; i < 2; i++) {
      const res = await api.app.inject({
        method: 'POST',
        url: '/api/v1/device/inbound',
        headers: { authorization: `Bearer ${user.devices[0]!.token}` },
        payload: { messages: [sms] },
      });
      expect(res.statusCode).toBe(202);
    }
    await stream.waitFor((frames) => frames.length >= 1);
    await publishUserEvents(api.app.redis, api.config.QUEUE_PREFIX, [{ userId: user.userId, event: status(crypto.randomUUID(), 'sent') }]);
    await stream.waitFor((frames) => frames.length >= 2); // a marker: anything published before it has arrived
    expect(stream.frames[0]).toEqual({
      event: 'sms.received',
      data: expect.objectContaining({ from: '+15550007777', message: 'hello back', device_id: user.deviceId, to: null, sim_number: null }),
    });
    expect(stream.frames.filter((f) => f.event === 'sms.received')).toHaveLength(1);
    await stream.close();
  });

  it(`answers 429 in JSON beyond ${MAX_STREAMS_PER_USER} streams of one user, and takes one again when one closes`, async () => {
    const user = await createTestUser(api.db);
    const streams = await Promise.all(Array.from({ length: MAX_STREAMS_PER_USER }, () => openStream(user.apiKey)));
    await Promise.all(streams.map((s) => s.waitFor(() => s.comments > 0)));
    const refused = await fetch(`${base}/api/v1/events`, { headers: { 'x-api-key': user.apiKey } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited' });
    await streams.pop()!.close();
    const again = await openStream(user.apiKey);
    await again.waitFor(() => again.comments > 0);
    expect(again.res.status).toBe(200);
    await Promise.all([...streams, again].map((s) => s.close()));
  });

  it('listens to a user’s channel only while one of the user’s streams is open', async () => {
    const user = await createTestUser(api.db);
    const listening = () => usersListening(api.app.redis, api.config.QUEUE_PREFIX);
    expect((await listening()).has(user.userId)).toBe(false);
    const [first, second] = [await openStream(user.apiKey), await openStream(user.apiKey)];
    await Promise.all([first, second].map((s) => s.waitFor(() => s.comments > 0)));
    expect((await listening()).has(user.userId)).toBe(true);
    await first.close();
    await publishUserEvents(api.app.redis, api.config.QUEUE_PREFIX, [{ userId: user.userId, event: status(crypto.randomUUID(), 'sent') }]);
    await second.waitFor((frames) => frames.length === 1);
    await second.close();
    await vi.waitFor(async () => expect((await listening()).has(user.userId)).toBe(false));
  });

  it('writes keepalive comments, and ends the stream after a JWT’s lifetime', async () => {
    const short = await startTestApi({ DEVICE_HEARTBEAT_SECONDS: '1', JWT_TTL_SECONDS: '3' });
    try {
      await short.app.listen({ port: 0, host: '127.0.0.1' });
      const user = await createTestUser(short.db);
      const port = (short.app.server.address() as AddressInfo).port;
      const started = Date.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/events`, { headers: { 'x-api-key': user.apiKey } });
      let text = '';
      for await (const chunk of res.body!) text += new TextDecoder().decode(chunk as Uint8Array);
      const lasted = Date.now() - started;
      expect(text.startsWith(': connected\n\n')).toBe(true);
      expect(text.match(/^: keepalive$/gm)?.length).toBeGreaterThanOrEqual(2);
      expect(lasted).toBeGreaterThanOrEqual(2900);
      expect(lasted).toBeLessThan(6000);
    } finally {
      await short.close();
    }
  });

  it('ends open streams when the API shuts down', async () => {
    const other = await startTestApi();
    try {
      await other.app.listen({ port: 0, host: '127.0.0.1' });
      const user = await createTestUser(other.db);
      const port = (other.app.server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/events`, { headers: { 'x-api-key': user.apiKey } });
      const reader = res.body!.getReader();
      await reader.read();
      const started = Date.now();
      await other.app.close();
      while (!(await reader.read()).done);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await other.close().catch(() => undefined);
    }
  });
});
