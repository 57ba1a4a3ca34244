import { describe, expect, it } from 'vitest';
import { stickyChoices } from './routing/sticky.ts';

const message = (id: string, previousDeviceId: string | null = null) => ({ id, userId: 'u', previousDeviceId });

describe('sticky sender', () => {
  it('keeps the sticky device (and SIM) while it is in the pool', () => {
    const chosen = stickyChoices([message('m1')], new Map([['m1', { deviceId: 'd2', simNumber: 2 }]]), new Map([['u', ['d1', 'd2']]]));
    expect(chosen.get('m1')).toEqual({ deviceId: 'd2', simNumber: 2 });
  });

  it('leaves a message to round-robin when its sticky device may not take it now, or it has none', () => {
    const chosen = stickyChoices([message('m1'), message('m2')], new Map([['m1', { deviceId: 'gone', simNumber: null }]]), new Map([['u', ['d1', 'd2']]]));
    expect(chosen.size).toBe(0);
  });

  it('does not hand a lapsed message back to the device it left, unless that is the only one', () => {
    const sticky = new Map([['m1', { deviceId: 'd1', simNumber: null }]]);
    expect(stickyChoices([message('m1', 'd1')], sticky, new Map([['u', ['d1', 'd2']]])).size).toBe(0);
    expect(stickyChoices([message('m1', 'd1')], sticky, new Map([['u', ['d1']]])).get('m1')?.deviceId).toBe('d1');
  });
});
