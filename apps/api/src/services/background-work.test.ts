import { describe, expect, it } from 'vitest';
import { BackgroundWork } from './background-work.ts';

describe('BackgroundWork', () => {
  it('takes work up to its limit, declines more, and settles once all of it ended (a failure included)', async () => {
    const work = new BackgroundWork(2);
    let finish!: () => void;
    const slow = new Promise<void>((resolve) => (finish = resolve));
    expect(work.add(slow)).toBe(true);
    expect(work.add(Promise.reject(new Error('reported by its owner')))).toBe(true);
    expect(work.add(Promise.resolve())).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(work.size).toBe(1);
    let settled = false;
    const all = work.settled().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    await all;
    expect(work.size).toBe(0);
    expect(work.add(Promise.resolve())).toBe(true);
  });
});
