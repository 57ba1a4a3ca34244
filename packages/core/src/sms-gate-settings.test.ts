import { describe, expect, it } from 'vitest';
import { keptSettings, mergeSettings, phoneSettings, snakeSettings } from './sms-gate-settings.ts';

const own = { signingKey: 'phone-key', pingSeconds: 60, pacing: null, appVersion: '1.68.0' };

describe('SMS Gate settings', () => {
  it("reads client-ts's camelCase as the snake_case field, leaving other names and non-objects as they are", () => {
    expect(snakeSettings({ webhooks: { signingKey: 'k' }, messages: { limitValue: 5, constructor: 1 }, ping: 3 })).toEqual({
      webhooks: { signing_key: 'k' },
      messages: { limit_value: 5, constructor: 1 },
      ping: 3,
    });
    expect(snakeSettings([1])).toEqual([1]);
    expect(() => snakeSettings({ messages: { limit_value: 1, limitValue: 2 } })).toThrow('messages.limit_value is given twice');
  });

  it("keeps upstream's modules and fields only, refuses what upstream refuses, and clears a patched null", () => {
    expect(keptSettings({ messages: { limit_value: 5, other: 1 }, extra: { a: 1 }, ping: null, encryption: { passphrase: null } })).toEqual({
      messages: { limit_value: 5 },
      encryption: { passphrase: null },
    });
    expect(() => keptSettings({ gateway: { private_token: '' } })).toThrow('gateway.private_token must not be set');
    expect(mergeSettings({ messages: { limit_value: 5, limit_period: 'PerDay' }, encryption: {} }, { messages: { limit_value: null } })).toEqual({
      messages: { limit_period: 'PerDay' },
    });
  });

  it("feeds the phone smsgw's own values over the account's where they win", () => {
    const account = {
      messages: { limit_period: 'Per30Minutes', limit_value: 4 },
      ping: { interval_seconds: 30 },
      webhooks: { signing_key: 'account' },
      encryption: { passphrase: 'x' },
    };
    expect(phoneSettings(account, own)).toEqual({
      gateway: { notification_channel: 'SSE_ONLY' },
      webhooks: { signing_key: 'phone-key' },
      ping: { interval_seconds: 30 },
      messages: { limit_period: 'Per30Minutes', limit_value: 4 },
    });
    // An app of unknown version may predate Per30Minutes: it gets the stricter PerHour.
    expect(phoneSettings(account, { ...own, appVersion: null }).messages).toEqual({ limit_period: 'PerHour', limit_value: 4 });
    expect(phoneSettings(account, { ...own, pacing: { limit_period: 'PerMinute', limit_value: 6 } }).messages).toEqual({
      limit_period: 'PerMinute',
      limit_value: 6,
    });
    expect(phoneSettings({ ping: { interval_seconds: 600 } }, own).ping).toEqual({ interval_seconds: 60 });
  });
});
