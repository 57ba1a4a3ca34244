import { describe, expect, it } from 'vitest';
import twilio from 'twilio';
import { MAX_TWIML_REPLIES, parseTwimlReplies, renderTwilioIncoming, twilioIncomingParams, TwimlError } from './twilio-incoming.ts';

const account = { accountSid: `AC${'a'.repeat(32)}`, messagingServiceSid: `MG${'b'.repeat(32)}`, authToken: 'c'.repeat(32) };
const sms = {
  id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  deviceId: 'dev-1',
  from: '+4915112345678',
  to: null,
  body: 'Hallo & grüß dich',
  simNumber: 2,
  receivedAt: new Date(0),
  createdAt: new Date(0),
};

describe("Twilio's incoming-message webhook", () => {
  it("is a form-encoded POST of Twilio's parameters that the twilio library validates with the Auth Token", () => {
    const url = 'https://hooks.example.com/sms?x=1';
    const params = twilioIncomingParams(sms, `SM${'d'.repeat(32)}`, '+4917000000002', account);
    expect(params).toEqual({
      MessageSid: `SM${'d'.repeat(32)}`,
      SmsSid: `SM${'d'.repeat(32)}`,
      SmsMessageSid: `SM${'d'.repeat(32)}`,
      AccountSid: account.accountSid,
      MessagingServiceSid: account.messagingServiceSid,
      From: '+4915112345678',
      To: '+4917000000002',
      Body: 'Hallo & grüß dich',
      NumMedia: '0',
      NumSegments: '1',
      SmsStatus: 'received',
      ApiVersion: '2010-04-01',
    });
    const request = renderTwilioIncoming(url, params, account.authToken, 'delivery-1');
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const received = Object.fromEntries(new URLSearchParams(request.body!));
    expect(received).toEqual(params);
    expect(twilio.validateRequest(account.authToken, request.headers['x-twilio-signature']!, url, received)).toBe(true);
    expect(twilio.validateRequest('another-token', request.headers['x-twilio-signature']!, url, received)).toBe(false);
  });
});

describe('TwiML answers', () => {
  it("reads what the twilio library's MessagingResponse writes: text, to=, <Body>, several messages, entities", () => {
    const twiml = new twilio.twiml.MessagingResponse();
    twiml.message('Thanks & see you <soon>');
    twiml.message({ to: '+4915199999999' }, 'Forwarded');
    twiml.message({ action: 'https://example.com/status' }, '').body('123');
    expect(parseTwimlReplies(twiml.toString())).toEqual([
      { to: null, body: 'Thanks & see you <soon>' },
      { to: '+4915199999999', body: 'Forwarded' },
      { to: null, body: '123' },
    ]);
  });

  it('finds no reply in an empty answer or an empty <Response>', () => {
    expect(parseTwimlReplies('')).toEqual([]);
    expect(parseTwimlReplies('  \n')).toEqual([]);
    expect(parseTwimlReplies(new twilio.twiml.MessagingResponse().toString())).toEqual([]);
    expect(parseTwimlReplies('<Response></Response>')).toEqual([]);
  });

  it('refuses, with a reason, what it cannot act on whole', () => {
    const refused = (answer: string) => {
      try {
        parseTwimlReplies(answer);
      } catch (error) {
        expect(error).toBeInstanceOf(TwimlError);
        return (error as Error).message;
      }
      throw new Error(`accepted: ${answer}`);
    };
    expect(refused('OK')).toMatch(/not XML/);
    expect(refused('<Response><Message>hi</Response>')).toMatch(/not XML/);
    expect(refused('{"reply":"hi"}')).toMatch(/not XML/);
    expect(refused('<Reply><Message>hi</Message></Reply>')).toMatch(/root element must be <Response>/);
    expect(refused('<Response><Redirect>https://x</Redirect></Response>')).toMatch(/<Redirect> is not supported/);
    expect(refused('<Response><Message><Body>hi</Body><Media>https://x/a.png</Media></Message></Response>')).toMatch(/MMS/);
    expect(refused('<Response><Message></Message></Response>')).toMatch(/no text/);
    expect(refused('<Response>hi</Response>')).toMatch(/text outside/);
    expect(refused(`<Response><Message>${'x'.repeat(1601)}</Message></Response>`)).toMatch(/longer than 1600/);
    expect(refused(`<Response>${'<Message>x</Message>'.repeat(MAX_TWIML_REPLIES + 1)}</Response>`)).toMatch(/at most 10/);
  });
});
