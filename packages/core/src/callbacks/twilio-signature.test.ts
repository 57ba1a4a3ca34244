import { expect, it } from 'vitest';
import twilio from 'twilio';
import { twilioSignature } from './twilio-signature.ts';

it('signs so that the twilio library validates the request, and only with the same token, URL and parameters', () => {
  const url = 'https://hooks.example.com/status?x=1';
  const params = { MessageSid: 'SM0123', MessageStatus: 'delivered', To: '+15005550006' };
  const signature = twilioSignature('token-1', url, params);
  expect(twilio.validateRequest('token-1', signature, url, params)).toBe(true);
  expect(twilio.validateRequest('token-2', signature, url, params)).toBe(false);
  expect(twilio.validateRequest('token-1', signature, `${url}2`, params)).toBe(false);
  expect(twilio.validateRequest('token-1', signature, url, { ...params, MessageStatus: 'failed' })).toBe(false);
});
