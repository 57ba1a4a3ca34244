import { afterEach, describe, expect, it, vi } from 'vitest';
import { BurstLog } from './burst-log.ts';

afterEach(() => {
  vi.useRealTimers();
});

function recorder() {
  const lines: { object: Record<string, unknown>; message: string }[] = [];
  return { lines, log: { warn: (object: object, message: string) => lines.push({ object: object as Record<string, unknown>, message }) } };
}

describe('BurstLog', () => {
  it('logs the first occurrence at once and the rest of the burst as one count', () => {
    vi.useFakeTimers();
    const { lines, log } = recorder();
    const burst = new BurstLog(log, 10_000);
    for (let i = 0; i < 500; i++) burst.report('Redis unavailable', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }));
    expect(lines).toEqual([{ object: { error: 'connect ECONNREFUSED 127.0.0.1:6379' }, message: 'Redis unavailable' }]);
    vi.advanceTimersByTime(10_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toEqual({ object: { repeated: 499, seconds: 10 }, message: 'Redis unavailable (repeated)' });
  });

  it('starts a new burst after the window, and keeps kinds apart', () => {
    vi.useFakeTimers();
    const { lines, log } = recorder();
    const burst = new BurstLog(log, 1000);
    burst.report('a', new Error('one'));
    burst.report('b', 'two', { queue: 'dispatch' });
    vi.advanceTimersByTime(1000);
    burst.report('a', Object.assign(new Error('three'), { code: 'E3' }));
    expect(lines.map((l) => [l.message, l.object])).toEqual([
      ['a', { error: 'one' }],
      ['b', { queue: 'dispatch', error: 'two' }],
      ['a', { error: 'E3: three' }],
    ]);
  });

  it('writes the counts in progress on close', () => {
    const { lines, log } = recorder();
    const burst = new BurstLog(log, 60_000);
    burst.report('x', new Error('e'));
    burst.report('x', new Error('e'));
    burst.close();
    expect(lines.map((l) => l.message)).toEqual(['x', 'x (repeated)']);
  });
});
