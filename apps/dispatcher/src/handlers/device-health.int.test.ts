import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatcherConfigSchema, loadConfig, type DispatcherConfig } from '@smsgw/config';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { failOver, quarantineDevices } from '@smsgw/db/sql';
import { createWebhooksQueue, type WebhooksQueue } from '@smsgw/queue';
import { createTestUser, startTestApi, type TestApi } from '@smsgw/api/testing';
import { announceDeviceHealth } from './device-health.ts';

/** Device alerts (docs/devices.md, "Alerts"): the sweep's step that announces each change of health once. */
let api: TestApi;
let queue: WebhooksQueue;
let config: DispatcherConfig;
beforeAll(async () => {
  api = await startTestApi();
  queue = createWebhooksQueue(api.app.redis, api.config.QUEUE_PREFIX);
  config = loadConfig(DispatcherConfigSchema, {
    DATABASE_URL: api.config.DATABASE_URL,
    REDIS_URL: api.config.REDIS_URL,
    QUEUE_PREFIX: api.config.QUEUE_PREFIX,
    DEVICE_OFFLINE_AFTER_SECONDS: '120',
  });
});
afterAll(async () => {
  await queue?.close();
  await api?.close();
});

const deps = () => ({ sql: api.sql, webhooksQueue: queue, config, log: pino({ level: 'silent' }) });
const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** A user with one device last seen at T0 (no stream) and an endpoint subscribed to `events`. */
async function fixture(events = ['device.offline', 'device.online', 'device.degraded']) {
  const user = await createTestUser(api.db);
  const deviceId = user.deviceId!;
  await api.db.device.update({ where: { id: deviceId }, data: { lastSeenAt: T0 } });
  await api.db.webhook.create({ data: { id: newId(), userId: user.userId, url: 'https://hooks.example.com/smsgw', events, secret: generateWebhookSecret() } });
  const deliveries = async () =>
    (await api.db.webhookDelivery.findMany({ where: { userId: user.userId }, orderBy: { occurredAt: 'asc' } })).map((d) => ({
      type: d.type,
      occurredAt: d.occurredAt,
      data: d.data as { id: string; health: { status: string; reasons: string[] } },
    }));
  const seen = (when: Date) => api.db.device.update({ where: { id: deviceId }, data: { lastSeenAt: when } });
  const status = async () => (await api.db.device.findUniqueOrThrow({ where: { id: deviceId } })).healthStatus;
  return { ...user, deviceId, deliveries, seen, status };
}

describe('announceDeviceHealth', () => {
  it('records a device’s first status without an event, announces offline only after the offline timer, then online at once', async () => {
    const f = await fixture();
    await announceDeviceHealth(deps(), at(1));
    expect({ status: await f.status(), deliveries: await f.deliveries() }).toEqual({ status: 'online', deliveries: [] });

    await announceDeviceHealth(deps(), at(119));
    expect(await f.deliveries()).toEqual([]);
    await announceDeviceHealth(deps(), at(120));
    expect(await f.deliveries()).toEqual([
      {
        type: 'device.offline',
        occurredAt: at(120),
        data: expect.objectContaining({ id: f.deviceId, health: expect.objectContaining({ status: 'offline', reasons: ['not_connected'] }) }),
      },
    ]);
    await announceDeviceHealth(deps(), at(500));
    expect(await f.deliveries()).toHaveLength(1);

    await f.seen(at(600));
    await announceDeviceHealth(deps(), at(601));
    expect((await f.deliveries()).map((d) => [d.type, d.data.health.status])).toEqual([
      ['device.offline', 'offline'],
      ['device.online', 'online'],
    ]);
    expect(await f.status()).toBe('online');
  });

  it('announces degraded with budget_exhausted once a carrier budget is used up, the record showing the usage', async () => {
    const f = await fixture();
    await api.db.device.update({ where: { id: f.deviceId }, data: { segmentsPerDay: 2 } });
    await announceDeviceHealth(deps(), at(1));
    expect(await f.status()).toBe('online');
    await api.db.message.create({
      data: {
        id: newId(),
        userId: f.userId,
        deviceId: f.deviceId,
        to: '+15550001111',
        body: 'x',
        segments: 2,
        encoding: 'GSM_7',
        state: 'assigned',
        assignedAt: at(5),
      },
    });
    await f.seen(at(300));
    await announceDeviceHealth(deps(), at(310));
    const [event] = await f.deliveries();
    expect(event).toMatchObject({ type: 'device.degraded', data: { health: { status: 'degraded', reasons: ['budget_exhausted'] } } });
    expect((event!.data as unknown as { usage: { segments_per_day: unknown } }).usage.segments_per_day).toEqual({
      limit: 2,
      used: 2,
      resets_at: '2026-03-02T00:00:00.000Z',
    });
  });

  it('announces a change once when two dispatchers judge the device at the same time', async () => {
    const f = await fixture();
    await announceDeviceHealth(deps(), at(1));
    await Promise.all([announceDeviceHealth(deps(), at(200)), announceDeviceHealth(deps(), at(200)), announceDeviceHealth(deps(), at(201))]);
    expect((await f.deliveries()).map((d) => d.type)).toEqual(['device.offline']);
  });

  it('announces degraded and its end at most once per 5 minutes, so a battery at the threshold does not flap', async () => {
    const f = await fixture();
    await announceDeviceHealth(deps(), at(1));
    const battery = async (level: number, when: number) => {
      await api.db.device.update({ where: { id: f.deviceId }, data: { batteryLevel: level, batteryCharging: false, lastSeenAt: at(when) } });
      await announceDeviceHealth(deps(), at(when));
    };
    await battery(19, 310);
    await battery(21, 320);
    await battery(19, 330);
    await battery(21, 340);
    expect((await f.deliveries()).map((d) => [d.type, d.data.health.reasons])).toEqual([['device.degraded', ['low_battery']]]);
    await battery(21, 609);
    expect(await f.deliveries()).toHaveLength(1);
    await battery(21, 611);
    expect((await f.deliveries()).map((d) => d.type)).toEqual(['device.degraded', 'device.online']);
  });

  it('writes deliveries only for the subscribed events, and judges neither disabled nor never-seen devices', async () => {
    const f = await fixture(['device.online']);
    await announceDeviceHealth(deps(), at(1));
    await announceDeviceHealth(deps(), at(130));
    expect(await f.status()).toBe('offline');
    expect(await f.deliveries()).toEqual([]);
    await f.seen(at(140));
    await announceDeviceHealth(deps(), at(141));
    expect((await f.deliveries()).map((d) => d.type)).toEqual(['device.online']);

    const disabled = await fixture();
    await api.db.device.update({ where: { id: disabled.deviceId }, data: { enabled: false } });
    const unseen = await fixture();
    await api.db.device.update({ where: { id: unseen.deviceId }, data: { lastSeenAt: null } });
    await announceDeviceHealth(deps(), at(1000));
    expect([await disabled.status(), await unseen.status()]).toEqual([null, null]);
  });

  it('announces a quarantine at once, within the dwell of the last announcement, and its end after the dwell', async () => {
    const f = await fixture();
    const judge = async (seconds: number) => {
      await f.seen(at(seconds));
      await announceDeviceHealth(deps(), at(seconds));
      return (await f.deliveries()).map((d) => [d.type, d.data.health.reasons]);
    };
    expect(await judge(1)).toEqual([]);
    // The failover's own statement, as the dispatcher runs it at the threshold (first cool-down: 1 minute).
    expect(await quarantineDevices(api.sql, { devices: [{ id: f.deviceId, quarantines: 0, until: at(65) }], now: at(5) })).toEqual([f.deviceId]);
    expect(await judge(6)).toEqual([['device.degraded', ['quarantined']]]);
    expect(await judge(7)).toHaveLength(1);
    // The cool-down ends and a second quarantine begins within the dwell: still announced as quarantined, nothing new.
    expect(await judge(70)).toHaveLength(1);
    await quarantineDevices(api.sql, { devices: [{ id: f.deviceId, quarantines: 1, until: at(220) }], now: at(100) });
    expect(await judge(101)).toHaveLength(1);
    expect(await judge(305)).toHaveLength(1);
    expect(await judge(310)).toEqual([
      ['device.degraded', ['quarantined']],
      ['device.online', []],
    ]);
  });

  it('announces Android’s sending limit on a device degraded already, once when two dispatchers judge it at the same time', async () => {
    const f = await fixture();
    await api.db.device.update({ where: { id: f.deviceId }, data: { batteryLevel: 10, batteryCharging: false } });
    await announceDeviceHealth(deps(), at(1));
    expect({ status: await f.status(), deliveries: await f.deliveries() }).toEqual({ status: 'degraded', deliveries: [] });

    const id = newId();
    await api.db.message.create({
      data: { id, userId: f.userId, deviceId: f.deviceId, to: '+15550001111', body: 'x', segments: 1, encoding: 'GSM_7', state: 'sending', sendingAt: at(9) },
    });
    const limit = { id, deviceId: f.deviceId, at: at(10), error: 'Send result: RESULT_ERROR_LIMIT_EXCEEDED', limitExceeded: true };
    const failed = await failOver(api.sql, { failures: [limit], now: at(10), maxAttempts: 3, limitPausedUntil: at(310) });
    expect(failed.devices).toMatchObject([{ id: f.deviceId, pausedUntil: at(310) }]);
    await f.seen(at(11));
    await Promise.all([announceDeviceHealth(deps(), at(11)), announceDeviceHealth(deps(), at(11)), announceDeviceHealth(deps(), at(12))]);
    expect((await f.deliveries()).map((d) => [d.type, d.data.health.reasons])).toEqual([['device.degraded', ['low_battery', 'limit_exceeded']]]);
  });
});
