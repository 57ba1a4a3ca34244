import { describe, expect, it } from 'vitest';
import { deviceHealth } from './device-health.ts';
import { isLimitExceeded, quarantineCooldownMs, quarantinesDue } from './failover.ts';
import { toMessageRecord, type MessageFields } from './message-record.ts';
import { failoverPool } from './routing/pools.ts';
import { pickDevice } from './routing/round-robin.ts';

// The SMS Gate app's texts (MessagesService.kt, resultToErrorMessage, v1.43 to v1.68).
const APP_TEXT = {
  RESULT_ERROR_NO_SERVICE: 'RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)',
  RESULT_ERROR_LIMIT_EXCEEDED: 'RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)',
};

describe('isLimitExceeded', () => {
  it('recognises the app’s text and a native device’s own word for it', () => {
    expect(isLimitExceeded(`Send result: ${APP_TEXT.RESULT_ERROR_LIMIT_EXCEEDED}`)).toBe(true);
    expect(isLimitExceeded('LIMIT_EXCEEDED by the carrier')).toBe(true);
    expect(isLimitExceeded('RESULT_ERROR_LIMIT_EXCEEDED')).toBe(true);
    expect(isLimitExceeded(`Send result: ${APP_TEXT.RESULT_ERROR_NO_SERVICE}`)).toBe(false);
    expect(isLimitExceeded(undefined)).toBe(false);
  });
});

describe('failoverPool and pickDevice', () => {
  const pool = ['a', 'b', 'c'];

  it('never offers a device the message was attempted on, nor a paused one', () => {
    expect(failoverPool(pool, { attempted: new Set(['a']), paused: new Set(['c']) })).toEqual(['b']);
    expect(failoverPool(pool, { attempted: new Set(['a', 'b', 'c']), paused: new Set() })).toEqual([]);
  });

  it('picks the slot’s device, the next when it is the previous assignment’s, none from an empty pool', () => {
    expect([0, 1, 2, 3].map((slot) => pickDevice(pool, slot, null))).toEqual(['a', 'b', 'c', 'a']);
    expect(pickDevice(pool, 1, 'b')).toBe('c');
    expect(pickDevice(['b'], 0, 'b')).toBe('b');
    expect(pickDevice([], 0, null)).toBeUndefined();
  });
});

describe('quarantine', () => {
  it('lasts 1 minute, doubling with each further quarantine, at most 1 hour', () => {
    expect([0, 1, 2, 5, 6, 50].map(quarantineCooldownMs)).toEqual([60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
  });

  it('is due at the threshold for a device not paused already', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    const due = quarantinesDue(
      [
        { id: 'below', retryableFailuresInARow: 4, quarantines: 0, pausedUntil: null },
        { id: 'at', retryableFailuresInARow: 5, quarantines: 0, pausedUntil: null },
        { id: 'again', retryableFailuresInARow: 6, quarantines: 2, pausedUntil: new Date('2026-11-26T09:59:00.000Z') },
        { id: 'paused', retryableFailuresInARow: 9, quarantines: 1, pausedUntil: new Date('2026-11-26T10:01:00.000Z') },
      ],
      { threshold: 5, now },
    );
    expect(due).toEqual([
      { id: 'at', quarantines: 0, until: new Date('2026-11-26T10:01:00.000Z') },
      { id: 'again', quarantines: 2, until: new Date('2026-11-26T10:04:00.000Z') },
    ]);
  });
});

describe('health of a paused device', () => {
  const now = new Date('2026-11-26T10:00:00.000Z');
  const device = {
    enabled: true,
    lastSeenAt: now,
    streamSeenAt: now,
    streamClosedAt: null,
    pushToken: false,
    appVersion: null,
    failuresInARow: 0,
    batteryLevel: null,
    batteryCharging: null,
    signalDbm: null,
    network: null,
  };
  const windows = {
    streamSince: new Date(now.getTime() - 30_000),
    closedSince: new Date(now.getTime() - 30_000),
    requestSince: new Date(now.getTime() - 60_000),
  };

  it('is degraded while quarantined or at Android’s limit, online once the pause is over', () => {
    const until = new Date(now.getTime() + 60_000);
    expect(deviceHealth({ ...device, pausedUntil: until, pauseReason: 'quarantined' }, windows, { now })).toMatchObject({
      status: 'degraded',
      reasons: ['quarantined'],
    });
    expect(deviceHealth({ ...device, pausedUntil: until, pauseReason: 'limit_exceeded' }, windows, { now }).reasons).toEqual(['limit_exceeded']);
    expect(deviceHealth({ ...device, pausedUntil: until, pauseReason: 'quarantined' }, windows, { now: until }).status).toBe('online');
  });
});

describe('the record’s attempts', () => {
  const base: MessageFields = {
    id: '01a21a2f-cb4d-7275-9891-1160870130db',
    batchId: null,
    deviceId: null,
    to: '+15551234567',
    body: 'hi',
    segments: 1,
    encoding: 'GSM-7',
    state: 'pending',
    error: null,
    createdAt: new Date('2026-11-26T10:00:00.000Z'),
    updatedAt: new Date('2026-11-26T10:00:00.000Z'),
    sentAt: null,
    deliveredAt: null,
  };
  const closed = [{ device_id: 'd1', error: 'no service', at: '2026-11-26T10:00:01.000Z' }];

  it('is empty until a device has the message in hand', () => {
    expect(toMessageRecord(base).attempts).toEqual([]);
    expect(toMessageRecord({ ...base, state: 'assigned', deviceId: 'd1' }).attempts).toEqual([]);
  });

  it('lists the closed attempts, then the current device’s: in hand, sent, or failed with its error', () => {
    const offeredAt = new Date('2026-11-26T10:00:02.000Z');
    const current = { ...base, attempts: closed, deviceId: 'd2', offeredAt };
    expect(toMessageRecord({ ...current, state: 'pending', deviceId: 'd1', offeredAt: null }).attempts).toEqual(closed);
    expect(toMessageRecord({ ...current, state: 'sending' }).attempts).toEqual([...closed, { device_id: 'd2', error: null, at: '2026-11-26T10:00:02.000Z' }]);
    expect(toMessageRecord({ ...current, state: 'sent', sentAt: new Date('2026-11-26T10:00:03.000Z') }).attempts.at(-1)).toEqual({
      device_id: 'd2',
      error: null,
      at: '2026-11-26T10:00:03.000Z',
    });
    expect(toMessageRecord({ ...current, state: 'failed', error: 'refused', failedAt: new Date('2026-11-26T10:00:04.000Z') }).attempts.at(-1)).toEqual({
      device_id: 'd2',
      error: 'refused',
      at: '2026-11-26T10:00:04.000Z',
    });
  });
});
