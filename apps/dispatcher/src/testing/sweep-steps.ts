import { pino } from 'pino';
import { expect } from 'vitest';
import { DispatcherConfigSchema, loadConfig, type DispatcherConfig } from '@smsgw/config';
import { applyReports, assignMessages, offerMessages } from '@smsgw/db';
import { send, uniquePhone as phone, type TestApi } from '@smsgw/api/testing';
import { sweep } from '../handlers/sweep.ts';
import { EndpointSlots } from '../webhooks/endpoint-slots.ts';

const log = pino({ level: 'silent' });

/**
 * What the sweep tests (handlers/sweep*.int.test.ts) do on the API that `get` gives: a sweep run
 * at a moment ahead, a message sent, assigned, offered and acknowledged, and what it became.
 */
export function sweepSteps(get: () => TestApi) {
  /** The default dispatcher settings (docs/devices.md, "Delivery"): 60 s, 3 assignments, an hour + 5 minutes of skew, 24 hours; outbox after 30 s. */
  function dispatcherConfig(env: Record<string, string> = {}): DispatcherConfig {
    return loadConfig(DispatcherConfigSchema, {
      DATABASE_URL: get().config.DATABASE_URL,
      REDIS_URL: get().config.REDIS_URL,
      QUEUE_PREFIX: get().config.QUEUE_PREFIX,
      LOG_LEVEL: 'silent',
      ...env,
    });
  }

  /** One sweep as the dispatcher runs it, at `secondsFromNow` in the future (so no lease has to be waited for). */
  function sweepAt(secondsFromNow: number, config = dispatcherConfig()) {
    return sweep(
      {
        sql: get().sql,
        redis: get().app.redis,
        dispatchQueue: get().queue,
        webhooksQueue: get().app.webhooksQueue,
        slots: new EndpointSlots(get().app.redis, get().config.QUEUE_PREFIX, 8, 20_000),
        config,
        log,
      },
      new Date(Date.now() + secondsFromNow * 1000),
    );
  }

  /** Sends one message through the API; with `dropJob` its dispatch job is removed (no dispatcher runs then). */
  async function sendOne(apiKey: string, options: { deviceId?: string; dropJob?: boolean } = {}): Promise<string> {
    const res = await send(get().app, apiKey, { recipients: [phone()], body: 'lease test', ...(options.deviceId && { device_id: options.deviceId }) });
    expect(res.statusCode).toBe(200);
    const [id] = res.json().message_ids as string[];
    if (options.dropJob) {
      await get().queue.remove(id!);
      expect(await get().queue.getJob(id!)).toBeUndefined();
    }
    return id!;
  }

  async function assign(id: string, deviceId: string): Promise<void> {
    expect(await assignMessages(get().sql, { assignments: [{ id, deviceId }], now: new Date() })).toEqual([{ id, deviceId }]);
  }

  function message(id: string) {
    return get().db.message.findUniqueOrThrow({ where: { id } });
  }

  async function events(id: string): Promise<{ state: string; detail: string | null }[]> {
    const rows = await get().db.messageEvent.findMany({ where: { messageId: id }, orderBy: { id: 'asc' } });
    return rows.map((r) => ({ state: r.state, detail: r.detail }));
  }

  /** Offers the device its messages, as a claim or a pull does; returns their ids. */
  async function offer(deviceId: string): Promise<string[]> {
    return (await offerMessages(get().sql, { deviceId, limit: 10, order: 'oldest', now: new Date() })).map((m) => m.id);
  }

  async function acknowledge(deviceId: string, id: string): Promise<void> {
    const now = new Date();
    expect((await applyReports(get().sql, { status: 'sending', reports: [{ id, deviceId, at: now, error: null }], now })).moved).toEqual([id]);
  }

  async function jobData(id: string): Promise<unknown> {
    return (await get().queue.getJob(id))?.data;
  }

  return { dispatcherConfig, sweepAt, sendOne, assign, message, events, offer, acknowledge, jobData };
}
