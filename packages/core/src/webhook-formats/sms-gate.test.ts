import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MessageFields } from '../message-record.ts';
import { isSmsGateEvent, smsGateEventOf, smsGateWebhookBody, smsGateWebhookHeaders } from './sms-gate.ts';

const at = new Date('2026-03-01T10:00:00.000Z');
const message: MessageFields = {
  id: 'm1',
  batchId: 'b1',
  deviceId: null,
  requestedDeviceId: 'd1',
  to: '+15550001111',
  body: 'hi',
  segments: 2,
  encoding: 'GSM-7',
  state: 'failed',
  error: null,
  createdAt: at,
  updatedAt: at,
  sentAt: null,
  deliveredAt: null,
  simNumber: null,
  failedAt: null,
};

describe('SMS Gate webhooks', () => {
  it("maps its events to the engine's and refuses the ones smsgw does not emit", () => {
    expect(smsGateEventOf('message.failed')).toBe('sms:failed');
    expect(smsGateEventOf('device.ping')).toBe('system:ping');
    expect(smsGateEventOf('device.offline')).toBeUndefined();
    expect(['sms:cancelled', 'mms:received', 'toString'].map(isSmsGateEvent)).toEqual([true, false, false]);
  });

  it('renders the envelope with unknown fields left out, the device named at send, and the event time for missing ones', () => {
    const body = smsGateWebhookBody({ id: 'del-1', webhookId: 'mine', occurredAt: at, type: 'message.failed', message, messageId: 'order-7' });
    expect(body).toBe(
      JSON.stringify({
        deviceId: 'd1',
        event: 'sms:failed',
        id: 'del-1',
        payload: { messageId: 'order-7', phoneNumber: '+15550001111', recipient: '+15550001111', failedAt: '2026-03-01T10:00:00.000Z', reason: 'Unknown' },
        webhookId: 'mine',
      }),
    );
  });

  it("signs body + timestamp as upstream's recipe checks it, and sends unsigned without a key", () => {
    const body = '{"event":"sms:sent"}';
    const headers = smsGateWebhookHeaders('k3y', body, 1767225600);
    expect(headers).toEqual({ 'x-signature': createHmac('sha256', 'k3y').update(`${body}1767225600`).digest('hex'), 'x-timestamp': '1767225600' });
    expect(smsGateWebhookHeaders(null, body, 1767225600)).toEqual({});
  });

  it("judges a ping's battery as the app does", () => {
    const ping = (level: number | null) =>
      JSON.parse(
        smsGateWebhookBody({
          id: 'p',
          webhookId: 'w',
          occurredAt: at,
          type: 'device.ping',
          ping: { device_id: 'd1', battery_level: level, battery_charging: null, app_version: null },
        }),
      ).payload.health;
    expect([ping(9).status, ping(24).status, ping(25).status, ping(null).status]).toEqual(['fail', 'warn', 'pass', 'pass']);
    expect(Object.keys(ping(null).checks)).toEqual(['connection:status']);
  });
});
