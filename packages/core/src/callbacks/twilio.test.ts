import { describe, expect, it } from 'vitest';
import twilio from 'twilio';
import type { MessageFields } from '../message-record.ts';
import { callbackEventOf, type CallbackLoaded } from './callback-event.ts';
import { renderTwilio } from './twilio.ts';

const message = (overrides: Partial<MessageFields> = {}): MessageFields => ({
  id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  batchId: null,
  deviceId: 'dev-1',
  to: '+4915112345678',
  body: 'hi',
  segments: 1,
  encoding: 'GSM-7',
  state: 'sent',
  error: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  sentAt: new Date(0),
  deliveredAt: null,
  sendAt: null,
  validUntil: null,
  simNumber: null,
  ...overrides,
});
const ACCOUNT = 'AC0190a1b2c3d47e5f8a9b0c1d2e3f4a5c';
const SERVICE = 'MG0123456789abcdef0123456789abcdef';
const URL = 'https://app.example/twilio/status?ref=42';
const target = (context: Record<string, unknown> = { accountSid: ACCOUNT, messagingServiceSid: SERVICE }) => ({ url: URL, format: 'twilio' as const, context });

function render(m: MessageFields, loaded: CallbackLoaded = { signingKey: 'token-1', senderNumber: '+15550001111' }, context?: Record<string, unknown>) {
  const event = callbackEventOf(m.state === 'failed' ? 'message.failed' : `message.${m.state}`, m)!;
  const request = renderTwilio(target(context), { event, message: m, occurredAt: new Date('2026-03-04T05:06:07.890Z') }, loaded);
  return { request, params: Object.fromEntries(new URLSearchParams(request.body!)) };
}

describe('Twilio status callbacks', () => {
  it("POSTs Twilio's form parameters of a delivered message, signed so that twilio.validateRequest accepts them with the token only", () => {
    const { request, params } = render(message({ state: 'delivered', deliveredAt: new Date() }));
    expect(request).toMatchObject({
      method: 'POST',
      url: URL,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1', 'x-twilio-signature': expect.any(String) },
    });
    expect(params).toEqual({
      SmsSid: 'SM0190a1b2c3d47e5f8a9b0c1d2e3f4a5b',
      SmsStatus: 'delivered',
      MessageStatus: 'delivered',
      To: '+4915112345678',
      MessagingServiceSid: SERVICE,
      MessageSid: 'SM0190a1b2c3d47e5f8a9b0c1d2e3f4a5b',
      AccountSid: ACCOUNT,
      From: '+15550001111',
      ApiVersion: '2010-04-01',
      RawDlrDoneDate: '2603040506',
    });
    const signature = request.headers['x-twilio-signature']!;
    expect(twilio.validateRequest('token-1', signature, URL, params)).toBe(true);
    expect(twilio.validateRequest('token-2', signature, URL, params)).toBe(false);
  });

  it('reports a message never sent as failed with ErrorCode 30008, and one a report said not delivered as undelivered with 30003', () => {
    const failed = render(message({ state: 'failed', sentAt: null, error: 'no network' })).params;
    expect([failed.MessageStatus, failed.SmsStatus, failed.ErrorCode, failed.RawDlrDoneDate]).toEqual(['failed', 'failed', '30008', undefined]);
    const undelivered = render(message({ state: 'failed', error: 'rejected' })).params;
    expect([undelivered.MessageStatus, undelivered.ErrorCode, undelivered.RawDlrDoneDate]).toEqual(['undelivered', '30003', '2603040506']);
    const sent = render(message()).params;
    expect([sent.MessageStatus, sent.ErrorCode, sent.RawDlrDoneDate]).toEqual(['sent', undefined, undefined]);
  });

  it('says the status of the transition it reports, though the message has moved on when it is rendered', () => {
    const m = message({ state: 'delivered', deliveredAt: new Date() });
    const request = renderTwilio(
      target(),
      { event: 'sent', message: m, occurredAt: new Date('2026-03-04T05:06:07.890Z') },
      { signingKey: 'token-1', senderNumber: null },
    );
    const params = Object.fromEntries(new URLSearchParams(request.body!));
    expect([params.MessageStatus, params.SmsStatus, params.RawDlrDoneDate]).toEqual(['sent', 'sent', undefined]);
  });

  it("leaves out From while no SIM number is known (the resource's null) and MessagingServiceSid when From named a SIM", () => {
    const { request, params } = render(message(), { signingKey: 'token-1', senderNumber: null }, { accountSid: ACCOUNT });
    expect(params).not.toHaveProperty('From');
    expect(params).not.toHaveProperty('MessagingServiceSid');
    expect(twilio.validateRequest('token-1', request.headers['x-twilio-signature']!, URL, params)).toBe(true);
  });
});
