import { describe, expect, it } from 'vitest';
import type { MessageFields } from '../message-record.ts';
import { callbackEventOf } from './callback-event.ts';
import { fillKannelEscapes, kannelMaskEvents, kannelUrlEncode, renderKannel } from './kannel.ts';

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

const unloaded = { signingKey: null, senderNumber: null };

describe('Kannel dlr-mask', () => {
  it('selects sent (8), delivered (1), undelivered (2), and never-sent for 2 or 16; 4 selects nothing', () => {
    expect(kannelMaskEvents(8)).toEqual(['sent']);
    expect(kannelMaskEvents(1)).toEqual(['delivered']);
    expect(kannelMaskEvents(2)).toEqual(['undelivered', 'failed']);
    expect(kannelMaskEvents(16)).toEqual(['failed']);
    expect(kannelMaskEvents(31)).toEqual(['sent', 'delivered', 'undelivered', 'failed']);
    expect(kannelMaskEvents(4)).toEqual([]);
    expect(kannelMaskEvents(0)).toEqual([]);
  });

  it('tells a report that the sent message did not arrive from a message never sent', () => {
    expect(callbackEventOf('message.failed', { sentAt: new Date() })).toBe('undelivered');
    expect(callbackEventOf('message.failed', { sentAt: null })).toBe('failed');
    expect(callbackEventOf('message.delivered', { sentAt: new Date() })).toBe('delivered');
    expect(callbackEventOf('message.sent', { sentAt: new Date() })).toBe('sent');
    expect(callbackEventOf('device.health', { sentAt: null })).toBeNull();
  });
});

describe('Kannel escape codes', () => {
  it('URL-encodes as Kannel: a space as +, letters, digits and -_.~ kept, the rest %XX in capitals', () => {
    expect(kannelUrlEncode('a b+c/ü~-_.')).toBe('a+b%2Bc%2F%C3%BC~-_.');
  });

  it('keeps %% as a percent sign and an unknown code as written', () => {
    expect(fillKannelEscapes('x=%d&y=%%&z=%Z&w=%2F', { d: '1' })).toBe('x=1&y=%&z=%Z&w=%2F');
  });

  it('fills a delivered report: %d 1, %p the number as the client wrote it, %P the sender, %t in UTC with +, %A DELIVRD', () => {
    const request = renderKannel(
      {
        url: 'http://h/dlr?t=%d&to=%p&q=%q&from=%P&at=%t&ts=%T&a=%A&id=%I&u=%n&c=%c',
        format: 'kannel',
        context: { from: 'ACME Corp', username: 'joe', coding: 2, numbers: { '+4915112345678': '004915112345678' } },
      },
      { event: 'delivered', message: message({ state: 'delivered' }), occurredAt: new Date('2026-03-04T05:06:07.890Z') },
      unloaded,
    );
    expect(request).toEqual({
      method: 'GET',
      url:
        'http://h/dlr?t=1&to=004915112345678&q=%2B4915112345678&from=ACME+Corp&at=2026-03-04+05:06:07&ts=1772600767&a=DELIVRD' +
        '&id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b&u=joe&c=2',
      headers: expect.any(Object),
      body: null,
    });
  });

  it('writes ACK/ for sent, NACK/<error> for never sent and UNDELIV/<error> for not delivered', () => {
    const render = (event: 'sent' | 'failed' | 'undelivered', error: string | null) =>
      renderKannel({ url: '%d|%A|%p', format: 'kannel', context: {} }, { event, message: message({ error }), occurredAt: new Date() }, unloaded).url;
    expect(render('sent', null)).toBe('8|ACK%2F|%2B4915112345678');
    expect(render('failed', 'no network')).toBe('16|NACK%2Fno+network|%2B4915112345678');
    expect(render('undelivered', 'rejected by carrier')).toBe('2|UNDELIV%2Frejected+by+carrier|%2B4915112345678');
  });
});
