import { describe, expect, it } from 'vitest';
import { estimate, runDeadline } from '../src/runs.ts';

describe('runDeadline', () => {
  it('is 09:00 Dhaka on the day of a run started on the 1st (02:00 local)', () => {
    const started = new Date('2026-11-30T20:00:00Z'); // 2026-12-01 02:00 Asia/Dhaka (UTC+6)
    expect(runDeadline(started, 'Asia/Dhaka').toISOString()).toBe('2026-12-01T03:00:00.000Z');
  });
  it('is the next 1st for a run started mid-month, across the year end', () => {
    expect(runDeadline(new Date('2026-12-15T10:00:00Z'), 'Asia/Dhaka').toISOString()).toBe('2027-01-01T03:00:00.000Z');
  });
  it('honours the company deadline and time zone', () => {
    expect(runDeadline(new Date('2026-11-30T20:00:00Z'), 'Asia/Dhaka', '08:30').toISOString()).toBe('2026-12-01T02:30:00.000Z');
    expect(runDeadline(new Date('2026-06-01T01:00:00Z'), 'Europe/London').toISOString()).toBe('2026-06-01T08:00:00.000Z');
  });
});

describe('estimate', () => {
  const deadline = new Date('2026-12-01T03:00:00Z'); // 09:00 Dhaka
  const now = new Date('2026-11-30T20:14:00Z'); // 02:14 Dhaka
  it('finishes at hh:mm, X before the deadline (the story: 50,000 at 37/s)', () => {
    const eta = estimate({ remaining: 50_000, rate: 37, deadline, now, timeZone: 'Asia/Dhaka', total: 50_000 });
    expect(eta.kind).toBe('on-time');
    expect(eta.text).toBe('At the current rate finishes at 02:36, 6 h 23 min before the 09:00 deadline');
  });
  it('warns when the rate misses the deadline (the old loop: one slip per 2 s)', () => {
    const eta = estimate({ remaining: 50_000, rate: 0.5, deadline, now, timeZone: 'Asia/Dhaka', total: 50_000 });
    expect(eta.kind).toBe('late');
    expect(eta.text).toMatch(/^Warning: at the current rate finishes at \d\d:\d\d, 21 h \d+ min after the 09:00 deadline$/);
  });
  it('has no estimate without throughput, and is done when nothing remains', () => {
    expect(estimate({ remaining: 10, rate: 0, deadline, now, timeZone: 'Asia/Dhaka', total: 10 }).kind).toBe('idle');
    expect(estimate({ remaining: 0, rate: 0, deadline, now, timeZone: 'Asia/Dhaka', total: 10 }).kind).toBe('done');
  });
});
