import { describe, expect, it } from 'vitest';
import { toMessageRecord } from '@smsgw/core';
import { messageFromSnapshot } from './webhook-deliveries.ts';

// A message row as `to_jsonb` stores it in a delivery: named device, failed before any assignment.
const snapshot = {
  id: '0195f2a0-0000-7000-8000-000000000001',
  batch_id: null,
  device_id: null,
  requested_device_id: '0195f2a0-0000-7000-8000-0000000000d1',
  to_number: '+15551234567',
  body: 'hi',
  segments: 1,
  encoding: 'GSM-7',
  state: 'failed',
  error: 'Expired',
  created_at: '2026-11-24T10:00:00Z',
  updated_at: '2026-11-24T10:05:00Z',
  sent_at: null,
  delivered_at: null,
};

describe('messageFromSnapshot', () => {
  it('shows the device named at send in the event of a message that no device took', () => {
    expect(toMessageRecord(messageFromSnapshot(snapshot)).device_id).toBe('0195f2a0-0000-7000-8000-0000000000d1');
  });

  it('shows send_at, valid_until and sim_number as stored, null when the row has none', () => {
    const scheduled = { ...snapshot, send_at: '2026-11-25T09:00:00+00:00', valid_until: '2026-11-25T09:10:00.5+00:00', sim_number: 2 };
    expect(toMessageRecord(messageFromSnapshot(scheduled))).toMatchObject({
      send_at: '2026-11-25T09:00:00.000Z',
      valid_until: '2026-11-25T09:10:00.500Z',
      sim_number: 2,
    });
    expect(toMessageRecord(messageFromSnapshot(snapshot))).toMatchObject({ send_at: null, valid_until: null, sim_number: null });
  });

  it('shows the assigned device once there is one', () => {
    const assigned = { ...snapshot, device_id: '0195f2a0-0000-7000-8000-0000000000d2' };
    expect(toMessageRecord(messageFromSnapshot(assigned)).device_id).toBe('0195f2a0-0000-7000-8000-0000000000d2');
  });
});
