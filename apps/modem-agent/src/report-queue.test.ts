import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import type { Report } from '@smsgw/client';
import { ReportQueue } from './report-queue.ts';

/** smsgw's side of the queue: each attempt with its time, unreachable while `down`. */
function fakeSmsgw() {
  const smsgw = {
    down: false,
    attempts: [] as { at: number; ids: string[] }[],
    accepted: [] as string[],
    async send(reports: Report[]) {
      smsgw.attempts.push({ at: Date.now(), ids: reports.map((r) => `${r.id}:${r.status}`) });
      if (smsgw.down) throw new Error('connect ECONNREFUSED 127.0.0.1:3000');
      return { accepted: reports.length, rejected: [] };
    },
  };
  return smsgw;
}

function queueFor(smsgw: ReturnType<typeof fakeSmsgw>, retryMaxMs = 2000) {
  return new ReportQueue({
    send: (reports) => smsgw.send(reports),
    onAccepted: (reports) => smsgw.accepted.push(...reports.map((r) => `${r.id}:${r.status}`)),
    log: pino({ level: 'silent' }),
    retryMaxMs,
  });
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ReportQueue', () => {
  it('sends a report on its own within 200 ms, together with those queued meanwhile, and a repeat once', async () => {
    const smsgw = fakeSmsgw();
    const queue = queueFor(smsgw);
    queue.add({ id: 'a', status: 'delivered' });
    await vi.advanceTimersByTimeAsync(120);
    queue.add({ id: 'b', status: 'failed', error: 'Not delivered' });
    queue.add({ id: 'a', status: 'delivered' });
    expect(smsgw.attempts).toEqual([]);
    await vi.advanceTimersByTimeAsync(80);
    expect(smsgw.attempts).toEqual([{ at: 200, ids: ['a:delivered', 'b:failed'] }]);
    expect(smsgw.accepted).toEqual(['a:delivered', 'b:failed']);
    expect(queue.size).toBe(0);

    // Idle again: the next report also leaves on its own.
    await vi.advanceTimersByTimeAsync(60_000);
    queue.add({ id: 'c', status: 'delivered' });
    await vi.advanceTimersByTimeAsync(200);
    expect(smsgw.attempts.map((a) => a.ids)).toEqual([['a:delivered', 'b:failed'], ['c:delivered']]);
    queue.close();
  });

  it('tries again after pauses doubling from 250 ms up to the maximum while smsgw is unreachable, then sends everything at once', async () => {
    const smsgw = fakeSmsgw();
    smsgw.down = true;
    const queue = queueFor(smsgw, 2000);
    queue.add({ id: 'a', status: 'delivered' });
    await vi.advanceTimersByTimeAsync(200 + 250 + 500 + 1000 + 2000 + 2000);
    const times = smsgw.attempts.map((a) => a.at);
    expect(times).toEqual([200, 450, 950, 1950, 3950, 5950]);

    // A report queued during a pause waits for the next attempt instead of adding one.
    queue.add({ id: 'b', status: 'sent' });
    await vi.advanceTimersByTimeAsync(1999);
    expect(smsgw.attempts).toHaveLength(6);
    expect(smsgw.accepted).toEqual([]);
    expect(queue.size).toBe(2);

    smsgw.down = false;
    await vi.advanceTimersByTimeAsync(1);
    expect(smsgw.attempts.at(-1)).toEqual({ at: 7950, ids: ['a:delivered', 'b:sent'] });
    expect(smsgw.accepted).toEqual(['a:delivered', 'b:sent']);
    expect(queue.size).toBe(0);

    // Accepted: the pauses start again from the short one, and nothing more is tried.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(smsgw.attempts).toHaveLength(7);
    smsgw.down = true;
    queue.add({ id: 'c', status: 'delivered' });
    await vi.advanceTimersByTimeAsync(200 + 250);
    expect(smsgw.attempts.slice(7).map((a) => a.at - 37_950)).toEqual([200, 450]);
    queue.close();
  });

  it('sends at once on flush, and stops its own attempts once closed', async () => {
    const smsgw = fakeSmsgw();
    const queue = queueFor(smsgw);
    queue.add({ id: 'a', status: 'sending' });
    await queue.flush();
    expect(smsgw.attempts).toEqual([{ at: 0, ids: ['a:sending'] }]);

    smsgw.down = true;
    queue.add({ id: 'b', status: 'delivered' });
    queue.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(smsgw.attempts).toHaveLength(1);
    await queue.flush();
    expect(smsgw.attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(smsgw.attempts).toHaveLength(2);
    expect(queue.size).toBe(1);
  });
});
