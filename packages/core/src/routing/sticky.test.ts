import { describe, expect, it } from 'vitest';
import { withStickySims } from './sticky.ts';

describe('withStickySims', () => {
  it('passes the sticky SIM only to a message that stayed on its sticky device', () => {
    const choices = new Map([
      ['m1', { deviceId: 'd1', simNumber: 2 }],
      ['m2', { deviceId: 'd1', simNumber: 2 }],
    ]);
    // Pacing moved m2 to d2, which has SIMs of its own; m3 had no sticky choice.
    expect(
      withStickySims(
        [
          { id: 'm1', deviceId: 'd1' },
          { id: 'm2', deviceId: 'd2' },
          { id: 'm3', deviceId: 'd1' },
        ],
        choices,
      ),
    ).toEqual([
      { id: 'm1', deviceId: 'd1', simNumber: 2 },
      { id: 'm2', deviceId: 'd2', simNumber: null },
      { id: 'm3', deviceId: 'd1', simNumber: null },
    ]);
  });

  it('leaves a SIM a carrier budget picked as it is', () => {
    const choices = new Map([['m1', { deviceId: 'd1', simNumber: 2 }]]);
    expect(withStickySims([{ id: 'm1', deviceId: 'd1', simNumber: 1 }], choices)).toEqual([{ id: 'm1', deviceId: 'd1', simNumber: 1 }]);
  });
});
