import { describe, expect, it } from 'vitest';
import { nextAttemptDelayMs, webhookBody } from './webhook-event.ts';
import type { MessageFields } from './message-record.ts';

const message: MessageFields = {
  id: '0190f5d6-0000-7000-8000-000000000001',
  batchId: null,
  deviceId: '0190f5d6-0000-7000-8000-000000000002',
  to: '+15555550100',
  body: 'hello',
  segments: 1,
  encoding: 'GSM-7',
  state: 'delivered',
  error: null,
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
  updatedAt: new Date('2026-11-22T10:00:02.000Z'),
  sentAt: new Date('2026-11-22T10:00:01.000Z'),
  deliveredAt: new Date('2026-11-22T10:00:02.000Z'),
};

describe('webhookBody', () => {
  it('is {type, timestamp, data} with the public message record as data', () => {
    const body = JSON.parse(webhookBody('message.delivered', new Date('2026-11-22T10:00:02.500Z'), message));
    expect(body).toEqual({
      type: 'message.delivered',
      timestamp: '2026-11-22T10:00:02.500Z',
      data: {
        id: message.id,
        status: 'delivered',
        state: 'delivered',
        to: '+15555550100',
        message: 'hello',
        device_id: message.deviceId,
        batch_id: null,
        segments: 1,
        encoding: 'GSM-7',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:02.000Z',
        sent_at: '2026-11-22T10:00:01.000Z',
        delivered_at: '2026-11-22T10:00:02.000Z',
        error: null,
        send_at: null,
        valid_until: null,
        sim_number: null,
        attempts: [],
      },
    });
  });

  it('gives the same bytes each time it is built from the same fields (every retry carries the same body)', () => {
    const at = new Date('2026-11-22T10:00:02.500Z');
    expect(webhookBody('message.sent', at, { ...message })).toBe(webhookBody('message.sent', at, { ...message }));
  });

  it('carries the test data as it is for webhook.test', () => {
    const data = { webhook_id: 'abc', message: 'This is a test event from smsgw.' };
    expect(JSON.parse(webhookBody('webhook.test', new Date(0), data))).toEqual({ type: 'webhook.test', timestamp: '1970-01-01T00:00:00.000Z', data });
  });
});

describe('nextAttemptDelayMs', () => {
  const schedule = [5, 300, 1800];

  it('follows the schedule, one delay per failed attempt, then stops', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4].map((n) => nextAttemptDelayMs(n, schedule, middle))).toEqual([5000, 300_000, 1_800_000, undefined]);
  });

  it('adds a jitter of at most a fifth either way', () => {
    expect(nextAttemptDelayMs(2, schedule, () => 0)).toBe(240_000);
    expect(nextAttemptDelayMs(2, schedule, () => 0.999999)).toBe(360_000);
    const spread = new Set(Array.from({ length: 50 }, () => nextAttemptDelayMs(2, schedule)));
    expect(spread.size).toBeGreaterThan(1);
    for (const delay of spread) expect(delay).toBeGreaterThanOrEqual(240_000);
  });

  it('with the default schedule of the environment (about a day), eight attempts span 22 to 34 hours', () => {
    // The default of WEBHOOK_RETRY_DELAYS (packages/config/src/env/dispatcher.ts).
    const defaults = [5, 300, 1800, 7200, 18000, 36000, 36000];
    const total = (r: number) => defaults.reduce((sum, _, i) => sum + nextAttemptDelayMs(i + 1, defaults, () => r)!, 0) / 3600_000;
    expect(total(0)).toBeGreaterThan(22);
    expect(total(0.999999)).toBeLessThan(34);
    expect(nextAttemptDelayMs(8, defaults)).toBeUndefined();
  });
});
