import { describe, expect, it } from 'vitest';
import { nextDueTimes } from '@beton/jobs';
import { payrollMonthFor, slipDeadline } from '@beton/payroll/month';
import { dayStart, localHhMm, localWhen, zonedTime } from '../src/time.ts';

/** Zones with daylight saving: every computation must use the offset at that very instant. */
describe('time zones with daylight saving (luxon)', () => {
  it('zonedTime: 03:00 in New York on the spring-forward day is EDT (07:00 UTC), the day before EST (08:00 UTC)', () => {
    // 2026-03-08 02:00 EST → 03:00 EDT. The old guess-and-correct arithmetic returned 08:00 UTC (04:00 EDT).
    expect(zonedTime('America/New_York', 2026, 3, 8, 3, 0).toISOString()).toBe('2026-03-08T07:00:00.000Z');
    expect(zonedTime('America/New_York', 2026, 3, 7, 3, 0).toISOString()).toBe('2026-03-07T08:00:00.000Z');
    expect(localHhMm(zonedTime('America/New_York', 2026, 3, 8, 3, 0), 'America/New_York')).toBe('03:00');
  });

  it('dayStart: London days around both changes are 23 and 25 hours long', () => {
    const day = (d: string) => (dayStart(d, 'Europe/London', 1).getTime() - dayStart(d, 'Europe/London').getTime()) / 3_600_000;
    expect(dayStart('2026-03-29', 'Europe/London').toISOString()).toBe('2026-03-29T00:00:00.000Z'); // GMT
    expect(dayStart('2026-03-30', 'Europe/London').toISOString()).toBe('2026-03-29T23:00:00.000Z'); // BST
    expect(day('2026-03-29')).toBe(23);
    expect(day('2026-10-25')).toBe(25);
    expect(day('2026-11-30')).toBe(24);
    // A day range crossing the month end (the admin console's "to" day + 1).
    expect(dayStart('2026-10-31', 'Europe/London', 1).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('localWhen names the wall-clock time in the zone on each side of a change', () => {
    expect(localWhen(new Date('2026-03-29T08:00:00Z'), 'Europe/London').en).toBe('09:00 on 29 Mar 2026');
    expect(localWhen(new Date('2026-03-28T09:00:00Z'), 'Europe/London').en).toBe('09:00 on 28 Mar 2026');
  });

  it('localWhen keeps each zone its own (its formatters are made once per zone): the same instant in three zones, twice', () => {
    const at = new Date('2026-11-30T20:30:00Z');
    for (let round = 0; round < 2; round++) {
      expect(localWhen(at, 'Asia/Dhaka')).toEqual({ en: '02:30 on 1 Dec 2026', bn: '1 ডিসেম্বর, 2026, 02:30' });
      expect(localWhen(at, 'Europe/London')).toEqual({ en: '20:30 on 30 Nov 2026', bn: '30 নভেম্বর, 2026, 20:30' });
      expect(localWhen(at, 'America/New_York').en).toBe('15:30 on 30 Nov 2026');
    }
    expect(() => localWhen(at, 'Mars/Olympus')).toThrow(RangeError);
  });

  it("a company in New York: the 09:00 deadline is 13:00 UTC in summer time and 14:00 UTC in winter; the run's month follows the local date", () => {
    expect(slipDeadline('2026-03', 'America/New_York').toISOString()).toBe('2026-04-01T13:00:00.000Z'); // EDT
    expect(slipDeadline('2026-10', 'America/New_York').toISOString()).toBe('2026-11-01T14:00:00.000Z'); // EST: summer time ended at 02:00 that morning
    expect(slipDeadline('2026-11', 'America/New_York').toISOString()).toBe('2026-12-01T14:00:00.000Z'); // EST
    // 1 April 03:30 UTC is still 31 March in New York: the run pays February.
    expect(payrollMonthFor(new Date('2026-04-01T03:30:00Z'), 'America/New_York')).toBe('2026-02');
    expect(payrollMonthFor(new Date('2026-04-01T05:00:00Z'), 'America/New_York')).toBe('2026-03');
  });

  it('a schedule at 02:00 on the 1st in London runs at 02:00 local on both sides of the change', () => {
    const [march, april] = nextDueTimes('0 2 1 * *', 'Europe/London', 2, new Date('2026-02-15T00:00:00Z'));
    expect(march!.toISOString()).toBe('2026-03-01T02:00:00.000Z'); // GMT
    expect(april!.toISOString()).toBe('2026-04-01T01:00:00.000Z'); // BST
  });
});
