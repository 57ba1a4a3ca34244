import { describe, expect, it } from 'vitest';
import { isForbiddenAddress } from './network-guard.ts';

/** How a URL's host reaches the guard: WHATWG parsing turns integer and hex IPv4 forms into dotted ones. */
const hostOf = (url: string) => new URL(url).hostname;

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '[::1]',
    '[::ffff:192.168.0.1]',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[::ffff:0:127.0.0.1]/', '[::ffff:0:7f00:1]'],
    ['http://[2002:7f00:1::1]/', '[2002:7f00:1::1]'],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]'],
  ])('refuses %s, which a URL parser reads as %s', (url, host) => {
    expect(hostOf(url)).toBe(host);
    expect(isForbiddenAddress(hostOf(url))).toBe(true);
  });

  it('refuses what is not an IP address (names are resolved first, then each address is checked)', () => {
    expect(isForbiddenAddress('localhost')).toBe(true);
    expect(isForbiddenAddress('example.com')).toBe(true);
  });
});
