import { describe, expect, it } from 'vitest';
import { inboundOptOutAction, optOutAction } from './opt-out.ts';

describe('opt-out keywords', () => {
  it('takes every stop keyword as the whole text, trimmed, in any case', () => {
    for (const text of ['STOP', 'stop', ' Stop\n', 'STOPALL', 'unsubscribe', 'Cancel', 'END', 'quit', 'OptOut']) {
      expect(optOutAction(text)).toBe('opt_out');
    }
  });

  it('takes START, UNSTOP and YES as opting in again', () => {
    for (const text of ['START', 'start ', 'Unstop', 'yes']) expect(optOutAction(text)).toBe('opt_in');
  });

  it('ignores a keyword inside a longer text, and other texts', () => {
    for (const text of ['stop texting me', 'please STOP', 'STOP!', 'S T O P', '', 'no', 'STOPPED']) expect(optOutAction(text)).toBeNull();
  });

  it('acts only for an E.164 sender', () => {
    expect(inboundOptOutAction({ from: '+15551234567', body: 'STOP' })).toBe('opt_out');
    expect(inboundOptOutAction({ from: 'MYBANK', body: 'STOP' })).toBeNull();
    expect(inboundOptOutAction({ from: '15551234567', body: 'START' })).toBeNull();
  });
});
