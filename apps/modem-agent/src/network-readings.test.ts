import { describe, expect, it } from 'vitest';
import { cregToNetwork, csqToDbm } from './network-readings.ts';

describe('modem readings', () => {
  it('turns AT+CSQ RSSI into dBm, 99 and out of range into null', () => {
    expect([0, 15, 31, 99, 32, -1].map(csqToDbm)).toEqual([-113, -83, -51, null, null, null]);
  });
  it('turns AT+CREG? status into a network state', () => {
    expect([0, 1, 2, 3, 4, 5].map(cregToNetwork)).toEqual(['none', 'registered', 'searching', 'denied', null, 'roaming']);
  });
});
