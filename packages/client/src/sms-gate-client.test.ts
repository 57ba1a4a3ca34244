import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { appDate, gsonJson, webhookSignature } from './sms-gate-client.ts';

describe('appDate', () => {
  const at = new Date('2026-07-01T11:03:05.123Z');

  it('writes the local time with its offset, as the app does', () => {
    expect(appDate(at, '+03:00')).toBe('2026-07-01T14:03:05.123+03:00');
    expect(appDate(at, '-05:30')).toBe('2026-07-01T05:33:05.123-05:30');
  });

  it('writes a zero offset as Z (SimpleDateFormat XXX)', () => {
    expect(appDate(at, '+00:00')).toBe('2026-07-01T11:03:05.123Z');
  });

  it('crosses the date line of the local day', () => {
    expect(appDate(new Date('2026-12-31T22:30:00.000Z'), '+03:00')).toBe('2027-01-01T01:30:00.000+03:00');
  });

  it('refuses an offset it cannot read', () => {
    expect(() => appDate(at, '+3')).toThrow(/offset/);
  });
});

describe('gsonJson', () => {
  it('leaves out keys whose value is null or undefined, at any depth', () => {
    const body = { id: 'd1', pushToken: undefined, simCards: [{ slotIndex: 0, carrierName: null, iccid: '***1' }], extra: null };
    expect(gsonJson(body)).toBe('{"id":"d1","simCards":[{"slotIndex":0,"iccid":"***1"}]}');
  });

  it('keeps null elements of an array, as Gson does', () => {
    expect(gsonJson({ a: [1, null] })).toBe('{"a":[1,null]}');
  });
});

describe('webhookSignature', () => {
  it('is the hex HMAC-SHA256 of the raw body followed by the timestamp', () => {
    const expected = createHmac('sha256', 'key').update('{"a":1}1751367785').digest('hex');
    expect(webhookSignature('key', '{"a":1}', '1751367785')).toBe(expected);
  });
});
