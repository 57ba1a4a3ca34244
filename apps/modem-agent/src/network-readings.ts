import type { NetworkState } from '@smsgw/core';

/** The modem's answers about its network (3GPP 27.007) as the native heartbeat's readings. */

/** `AT+CSQ` RSSI (0-31, 99 unknown) in dBm (3GPP 27.007 §8.5): 0 is -113 dBm or less, each step 2 dB. */
export function csqToDbm(rssi: number): number | null {
  return Number.isInteger(rssi) && rssi >= 0 && rssi <= 31 ? -113 + 2 * rssi : null;
}

/** `AT+CREG?` registration status (3GPP 27.007 §7.2) as a network state. */
export function cregToNetwork(stat: number): NetworkState | null {
  return ({ 0: 'none', 1: 'registered', 2: 'searching', 3: 'denied', 5: 'roaming' } as Record<number, NetworkState>)[stat] ?? null;
}
