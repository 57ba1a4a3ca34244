import { describe, expect, it } from 'vitest';
import { quotaPeriod } from './quota-period.ts';

function iso(period: ReturnType<typeof quotaPeriod>) {
  return { label: period.label, start: period.start.toISOString(), resetsAt: period.resetsAt.toISOString() };
}

describe('quotaPeriod', () => {
  it('is the calendar month in UTC, resetting at the first instant of the next month', () => {
    expect(iso(quotaPeriod(new Date('2026-11-21T10:30:00.000Z')))).toEqual({
      label: '2026-11',
      start: '2026-11-01T00:00:00.000Z',
      resetsAt: '2026-12-01T00:00:00.000Z',
    });
  });

  it('rolls December over into January of the next year', () => {
    expect(iso(quotaPeriod(new Date('2026-12-31T23:59:59.999Z')))).toEqual({
      label: '2026-12',
      start: '2026-12-01T00:00:00.000Z',
      resetsAt: '2027-01-01T00:00:00.000Z',
    });
    expect(iso(quotaPeriod(new Date('2027-01-01T00:00:00.000Z')))).toEqual({
      label: '2027-01',
      start: '2027-01-01T00:00:00.000Z',
      resetsAt: '2027-02-01T00:00:00.000Z',
    });
  });

  it('uses UTC, not the offset the instant was written with', () => {
    // Already January in Warsaw, still December in UTC.
    expect(quotaPeriod(new Date('2027-01-01T00:30:00+01:00')).label).toBe('2026-12');
    // Still December in New York, already January in UTC.
    expect(quotaPeriod(new Date('2026-12-31T20:00:00-05:00')).label).toBe('2027-01');
  });

  it('starts the period at its first instant', () => {
    const start = new Date('2026-03-01T00:00:00.000Z');
    expect(iso(quotaPeriod(start))).toEqual({ label: '2026-03', start: start.toISOString(), resetsAt: '2026-04-01T00:00:00.000Z' });
    expect(quotaPeriod(new Date(start.getTime() - 1)).label).toBe('2026-02');
  });

  it('handles February in leap and common years', () => {
    expect(quotaPeriod(new Date('2028-02-29T12:00:00.000Z')).resetsAt.toISOString()).toBe('2028-03-01T00:00:00.000Z');
    expect(quotaPeriod(new Date('2027-02-28T23:59:59.999Z')).resetsAt.toISOString()).toBe('2027-03-01T00:00:00.000Z');
  });
});
