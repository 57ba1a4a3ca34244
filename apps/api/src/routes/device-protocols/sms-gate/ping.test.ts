import { describe, expect, it } from 'vitest';
import { healthFromPing } from './ping.ts';

const ping = (checks: Record<string, unknown>) => ({ health: { status: 'warn', checks, version: '1.68.0', releaseId: 68 } });

describe('healthFromPing', () => {
  it('reads the battery level, charging and the cellular check of the app’s ping', () => {
    expect(
      healthFromPing(
        ping({
          'battery:level': { status: 'warn', observedValue: 14.6, observedUnit: 'percent' },
          'battery:charging': { status: 'pass', observedValue: 0 },
          'connection:cellular': { status: 'fail', observedValue: 0 },
        }),
      ),
    ).toEqual({ batteryLevel: 15, batteryCharging: false, network: 'none' });
    // Charging is a flags value (1 AC, 2 USB, 4 wireless); a cellular type of 0 that passes is a phone on Wi-Fi.
    expect(
      healthFromPing(ping({ 'battery:charging': { observedValue: 4, observedUnit: 'flags' }, 'connection:cellular': { status: 'pass', observedValue: 0 } })),
    ).toEqual({
      batteryCharging: true,
    });
    expect(healthFromPing(ping({ 'battery:charging': { observedValue: true } }))).toEqual({ batteryCharging: true });
  });

  it('leaves out what is missing or odd, one check at a time', () => {
    expect(
      healthFromPing(ping({ 'battery:level': { observedValue: 'full' }, 'battery:charging': 'yes', 'connection:cellular': { status: 'unknown' } })),
    ).toEqual({});
    expect(healthFromPing(ping({ 'battery:level': { observedValue: 250 } }))).toEqual({ batteryLevel: 100 });
    for (const payload of [undefined, null, 'x', [], { health: [] }, { health: { checks: null } }]) expect(healthFromPing(payload)).toEqual({});
  });
});
