import { describe, expect, it } from 'vitest';
import { paceWindows, phonePacing } from './pacing.ts';

const none = { perMinute: null, perHour: null, perDay: null };

describe('pacing', () => {
  it('makes one window per limit that is set', () => {
    expect(paceWindows(none)).toEqual([]);
    expect(paceWindows({ ...none, perMinute: 6, perDay: 500 })).toEqual([
      { windowMs: 60_000, limit: 6 },
      { windowMs: 86_400_000, limit: 500 },
    ]);
  });

  it('gives the SMS Gate app the shortest window that is set', () => {
    expect(phonePacing(none)).toBeNull();
    expect(phonePacing({ perMinute: null, perHour: 100, perDay: 500 })).toEqual({ limit_period: 'PerHour', limit_value: 100 });
    expect(phonePacing({ perMinute: 6, perHour: 100, perDay: null })).toEqual({ limit_period: 'PerMinute', limit_value: 6 });
  });
});
