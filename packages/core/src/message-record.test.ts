import { describe, expect, it } from 'vitest';
import {
  MessageRecordSchema,
  MessageStatusEventSchema,
  messageFromRow,
  statusFromRow,
  toMessageRecord,
  toMessageWebhookPayload,
  toStatusEvent,
  type MessageColumns,
} from './message-record.ts';
import { webhookBody } from './webhook-event.ts';

// One row, as a query returns it (dates as Date): delivered on its second device, named at send.
const row: MessageColumns = {
  id: '0195f2a0-0000-7000-8000-000000000001',
  batch_id: '0195f2a0-0000-7000-8000-0000000000b1',
  device_id: '0195f2a0-0000-7000-8000-0000000000d2',
  requested_device_id: '0195f2a0-0000-7000-8000-0000000000d1',
  to_number: '+15551234567',
  body: 'hi',
  segments: 1,
  encoding: 'GSM-7',
  state: 'delivered',
  error: null,
  created_at: new Date('2026-11-24T10:00:00.000Z'),
  updated_at: new Date('2026-11-24T10:00:05.000Z'),
  sent_at: new Date('2026-11-24T10:00:03.000Z'),
  delivered_at: new Date('2026-11-24T10:00:05.000Z'),
  failed_at: null,
  send_at: null,
  valid_until: new Date('2026-11-24T11:00:00.000Z'),
  sim_number: 2,
  offered_at: new Date('2026-11-24T10:00:02.000Z'),
  attempts: [{ device_id: '0195f2a0-0000-7000-8000-0000000000d1', error: 'RESULT_ERROR_LIMIT_EXCEEDED', at: '2026-11-24T10:00:01.000Z' }],
};
/** The same row as `to_jsonb` stores it in a webhook delivery: dates as strings, in Postgres' own format. */
const snapshot = Object.fromEntries(
  Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString().replace('.000Z', '+00:00') : value]),
) as unknown as MessageColumns;

const SHARED = ['id', 'status', 'state', 'batch_id', 'device_id', 'error', 'created_at', 'updated_at', 'sent_at', 'delivered_at'] as const;

describe('the shapes of one message', () => {
  it('maps the row to the record, each key as the schema orders it', () => {
    const record = toMessageRecord(messageFromRow(row));
    expect(Object.keys(record)).toEqual(Object.keys(MessageRecordSchema.properties));
    expect(record).toEqual({
      id: row.id,
      status: 'delivered',
      state: 'delivered',
      to: '+15551234567',
      message: 'hi',
      device_id: row.device_id,
      batch_id: row.batch_id,
      segments: 1,
      encoding: 'GSM-7',
      created_at: '2026-11-24T10:00:00.000Z',
      updated_at: '2026-11-24T10:00:05.000Z',
      sent_at: '2026-11-24T10:00:03.000Z',
      delivered_at: '2026-11-24T10:00:05.000Z',
      error: null,
      send_at: null,
      valid_until: '2026-11-24T11:00:00.000Z',
      sim_number: 2,
      attempts: [...row.attempts!, { device_id: row.device_id, error: null, at: '2026-11-24T10:00:03.000Z' }],
    });
  });

  it('maps the row to the live event, each key as the schema orders it', () => {
    const event = toStatusEvent(statusFromRow(row));
    expect(Object.keys(event)).toEqual(Object.keys(MessageStatusEventSchema.properties));
    expect(event).toEqual({
      id: row.id,
      status: 'delivered',
      state: 'delivered',
      batch_id: row.batch_id,
      device_id: row.device_id,
      error: null,
      created_at: '2026-11-24T10:00:00.000Z',
      updated_at: '2026-11-24T10:00:05.000Z',
      sent_at: '2026-11-24T10:00:03.000Z',
      delivered_at: '2026-11-24T10:00:05.000Z',
      failed_at: null,
    });
  });

  it('maps the delivery snapshot of the row to the webhook payload, whose data is the record', () => {
    const occurredAt = new Date('2026-11-24T10:00:05.000Z');
    const payload = toMessageWebhookPayload('message.delivered', occurredAt, messageFromRow(snapshot));
    expect(payload).toEqual({ type: 'message.delivered', timestamp: '2026-11-24T10:00:05.000Z', data: toMessageRecord(messageFromRow(row)) });
    expect(webhookBody('message.delivered', occurredAt, messageFromRow(snapshot))).toBe(JSON.stringify(payload));
  });

  it('gives the same shared fields in the record (a list row is the record), the webhook payload and the live event, in every state', () => {
    const states = [
      { state: 'pending', device_id: null, sent_at: null, delivered_at: null },
      { state: 'assigned', sent_at: null, delivered_at: null },
      { state: 'failed', error: 'Expired', delivered_at: null, failed_at: new Date('2026-11-24T10:00:04.000Z') },
      { state: 'cancelled', device_id: null, requested_device_id: null, batch_id: null, sent_at: null, delivered_at: null },
    ] as const;
    for (const change of [{}, ...states]) {
      const moved = { ...row, ...change } as MessageColumns;
      const record = toMessageRecord(messageFromRow(moved));
      const payload = toMessageWebhookPayload('message.failed', new Date(), messageFromRow(JSON.parse(JSON.stringify(moved)) as MessageColumns)).data;
      const event = toStatusEvent(statusFromRow(moved));
      for (const key of SHARED) {
        expect(payload[key], key).toEqual(record[key]);
        expect(event[key], key).toEqual(record[key]);
      }
    }
  });

  it('shows the device named at send until one is assigned, in every shape', () => {
    const named = { ...row, state: 'pending', device_id: null, sent_at: null, delivered_at: null, offered_at: null, attempts: [] } as MessageColumns;
    expect(toMessageRecord(messageFromRow(named)).device_id).toBe(row.requested_device_id);
    expect(toStatusEvent(statusFromRow(named)).device_id).toBe(row.requested_device_id);
  });

  it('reads a column an older snapshot lacks as none', () => {
    const { send_at: _s, valid_until: _v, sim_number: _n, attempts: _a, offered_at: _o, failed_at: _f, requested_device_id: _r, ...older } = snapshot;
    const record = toMessageRecord(messageFromRow(older));
    expect(record).toMatchObject({ send_at: null, valid_until: null, sim_number: null, attempts: [] });
    expect(toStatusEvent(statusFromRow(older)).failed_at).toBeNull();
  });
});
