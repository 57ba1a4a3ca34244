import { describe, expect, it } from 'vitest';
import { cancelsHeldMessages, DEVICE_PROTOCOL_NAMES, DEVICE_PROTOCOL_SLUGS, DEVICE_PROTOCOLS, protocolOfSlug, protocolsWith } from './device-protocols.ts';

describe('DEVICE_PROTOCOLS', () => {
  it('names each protocol once, by a slug of its own that leads back to it', () => {
    expect(new Set(DEVICE_PROTOCOL_SLUGS).size).toBe(DEVICE_PROTOCOL_NAMES.length);
    for (const name of DEVICE_PROTOCOL_NAMES) expect(protocolOfSlug(DEVICE_PROTOCOLS[name].slug)).toBe(name);
  });

  it('lets only SMS Gate phones send encrypted messages and pace themselves from their settings', () => {
    expect(protocolsWith('encryptedMessages')).toEqual(['sms_gate']);
    expect(protocolsWith('pacesFromSettings')).toEqual(['sms_gate']);
  });
});

describe('cancelsHeldMessages', () => {
  it.each([
    ['sms_gate', '1.67.0', true],
    ['sms_gate', '1.68.0', true],
    ['sms_gate', '1.66.9', false],
    ['sms_gate', null, false],
    ['native', '9.9', false],
    ['native', null, false],
  ] as const)('a %s device of app %j: %s', (protocol, appVersion, expected) => {
    expect(cancelsHeldMessages({ protocol, appVersion })).toBe(expected);
  });
});
