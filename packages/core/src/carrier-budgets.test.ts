import { describe, expect, it } from 'vitest';
import { budgetExhausted, budgetUsage, budgetWindows, deviceSimNumbers, mergeSimBudgets, NO_BUDGETS, NO_COUNTS, readSimBudgets } from './carrier-budgets.ts';
import { isAppError } from './errors.ts';
import { simChoiceOrder } from './routing/budgets.ts';

describe('carrier budgets', () => {
  it("reads a device's SIMs from what the app reported, else SIM 1 alone", () => {
    expect(deviceSimNumbers([{ simNumber: 2 }, { simNumber: 1 }, { simNumber: 2 }])).toEqual([1, 2]);
    expect(deviceSimNumbers(null)).toEqual([1]);
    expect(deviceSimNumbers([{ slotIndex: 0 }, { simNumber: 9 }, 'x'])).toEqual([1]);
  });

  it('merges a PATCH into the per-SIM budgets: set, keep, remove, and drop a SIM left with none', () => {
    const current = readSimBudgets([
      { sim_number: 1, segments_per_day: 100 },
      { sim_number: 2, segments_per_hour: 30, segments_per_month: 900 },
    ]);
    const merged = mergeSimBudgets(
      current,
      [
        { sim_number: 1, segments_per_day: null },
        { sim_number: 2, segments_per_hour: 40, segments_per_month: null },
      ],
      [1, 2],
    );
    expect(merged).toEqual([{ sim_number: 2, segments_per_hour: 40 }]);
  });

  it('refuses a SIM the device does not have, or the same SIM twice, naming sim_number', () => {
    const refused = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return isAppError(error) ? { code: error.code, message: error.message } : error;
      }
      return 'accepted';
    };
    expect(refused(() => mergeSimBudgets([], [{ sim_number: 2, segments_per_day: 5 }], [1]))).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('sims[0].sim_number'),
    });
    expect(
      refused(() =>
        mergeSimBudgets(
          [],
          [
            { sim_number: 1, segments_per_day: 5 },
            { sim_number: 1, segments_per_hour: 5 },
          ],
          [1],
        ),
      ),
    ).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('sims[1].sim_number'),
    });
  });

  it('has a rolling hour by the minute, and a UTC calendar day and month', () => {
    const w = budgetWindows(new Date('2026-02-28T23:30:45.500Z'));
    expect(w.hourStart.toISOString()).toBe('2026-02-28T22:31:00.000Z');
    expect(w.dayStart.toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(w.dayEnd.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(w.monthStart.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(w.monthEnd.toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('shows usage with when each window resets: the hour when its oldest part leaves', () => {
    const now = new Date('2026-05-10T12:00:30.000Z');
    const usage = budgetUsage(
      { ...NO_BUDGETS, segmentsPerHour: 10 },
      { ...NO_COUNTS, hour: 4, hourOldest: new Date('2026-05-10T11:20:10.000Z'), month: 40 },
      now,
    );
    expect(usage.segments_per_hour).toEqual({ limit: 10, used: 4, resets_at: '2026-05-10T12:20:00.000Z' });
    expect(usage.segments_per_month).toEqual({ limit: null, used: 40, resets_at: '2026-06-01T00:00:00.000Z' });
    expect(budgetUsage(NO_BUDGETS, NO_COUNTS, now).segments_per_hour.resets_at).toBeNull();
  });

  it('is exhausted when a budget of the device is used up, or that of every SIM it has', () => {
    const now = new Date();
    const full = budgetUsage({ ...NO_BUDGETS, segmentsPerDay: 5 }, { ...NO_COUNTS, day: 5 }, now);
    const room = budgetUsage({ ...NO_BUDGETS, segmentsPerDay: 5 }, { ...NO_COUNTS, day: 4 }, now);
    const none = budgetUsage(NO_BUDGETS, { ...NO_COUNTS, day: 500 }, now);
    expect(budgetExhausted(full, [], [1])).toBe(true);
    expect(budgetExhausted(none, [], [1])).toBe(false);
    expect(
      budgetExhausted(
        none,
        [
          { simNumber: 1, usage: full },
          { simNumber: 2, usage: full },
        ],
        [1, 2],
      ),
    ).toBe(true);
    expect(
      budgetExhausted(
        none,
        [
          { simNumber: 1, usage: full },
          { simNumber: 2, usage: room },
        ],
        [1, 2],
      ),
    ).toBe(false);
    // SIM 2 has no budget: it always has room.
    expect(budgetExhausted(none, [{ simNumber: 1, usage: full }], [1, 2])).toBe(false);
  });

  it('tries the SIMs with a budget first, lowest number first, then those without', () => {
    const budgeted = readSimBudgets([
      { sim_number: 3, segments_per_day: 1 },
      { sim_number: 2, segments_per_day: 1 },
    ]);
    expect(simChoiceOrder([1, 2, 3], budgeted)).toEqual([2, 3, 1]);
    expect(simChoiceOrder([1], budgeted)).toEqual([1]);
  });
});
