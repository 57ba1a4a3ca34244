import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parsePayload } from '@smsgw/queue';
import { CANCELLED_ERROR, reportsOfSnapshot } from './snapshots.ts';

const arrival = new Date('2026-07-01T12:00:00.000Z');

describe('reportsOfSnapshot', () => {
  it('maps each state of the app to the device core’s reports', () => {
    const id = randomUUID();
    const states = { Pending: '2026-07-01T14:00:00.000+03:00', Sent: '2026-07-01T14:00:01.000+03:00', Delivered: '2026-07-01T14:00:09.000+03:00' };
    const of = (state: string) => reportsOfSnapshot({ id, state, states }, arrival);
    expect(of('Pending')).toEqual([{ id, status: 'sending', at: '2026-07-01T11:00:00.000Z' }]);
    expect(of('Processed')).toEqual(of('Pending'));
    expect(of('Cancelling')).toEqual(of('Pending'));
    expect(of('Sent')).toEqual([{ id, status: 'sent', at: '2026-07-01T11:00:01.000Z' }]);
    expect(of('Delivered')).toEqual([
      { id, status: 'sent', at: '2026-07-01T11:00:01.000Z' },
      { id, status: 'delivered', at: '2026-07-01T11:00:09.000Z' },
    ]);
    expect(of('Failed')).toEqual([{ id, status: 'failed' }]);
    expect(of('Cancelled')).toEqual([{ id, status: 'failed', error: CANCELLED_ERROR }]);
    expect(of('delivered')).toEqual([]);
    expect(of('toString')).toEqual([]);
  });

  it('marks a failure retryable only when the app’s error names an Android result that never left the phone', () => {
    const failed = (error: string) =>
      reportsOfSnapshot({ id: 'a', state: 'Failed', recipients: [{ phoneNumber: '+15551234567', state: 'Failed', error }] }, arrival);
    const noService = 'Send result: RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)';
    expect(failed(noService)).toEqual([{ id: 'a', status: 'failed', error: noService, retryable: true }]);
    const generic = 'Send result: RESULT_ERROR_GENERIC_FAILURE (Generic failure cause)';
    expect(failed(generic)).toEqual([{ id: 'a', status: 'failed', error: generic }]);
    expect(failed('Delivery result from SC +4912345: 64')).toEqual([{ id: 'a', status: 'failed', error: 'Delivery result from SC +4912345: 64' }]);
    // The report job accepts the flag.
    expect(() => parsePayload('device.reports', { deviceId: randomUUID(), receivedAt: arrival.toISOString(), reports: failed(noService) })).not.toThrow();
  });

  it('reads no state from the object prototype', () => {
    expect(reportsOfSnapshot({ id: 'a', state: 'Processed', states: {} }, arrival)).toEqual([{ id: 'a', status: 'sending' }]);
  });

  it.each(['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999+14:00', '2026-02-31T10:00:00.000+03:00', '2026-07-01T24:00:00Z', '+-5:00', '', 'null'])(
    'makes a report job the queue accepts from the date %j',
    (date) => {
      const reports = reportsOfSnapshot({ id: randomUUID(), state: 'Delivered', states: { Sent: date, Delivered: date } }, arrival);
      expect(reports).toHaveLength(2);
      expect(() => parsePayload('device.reports', { deviceId: randomUUID(), receivedAt: arrival.toISOString(), reports })).not.toThrow();
    },
  );
});
