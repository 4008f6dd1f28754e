import { describe, expect, it } from 'vitest';
import { resendStage, RESEND_STAGES } from '../src/employees.ts';
import { estimate, runDeadline, slipStages } from '../src/runs.ts';
import { emptyCounts, type JobStatus } from '../src/types.ts';

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

describe('estimate in Bengali', () => {
  const deadline = new Date('2026-12-01T03:00:00Z');
  const now = new Date('2026-11-30T20:14:00Z');
  it('says the same as the English line', () => {
    expect(estimate({ remaining: 50_000, rate: 37, deadline, now, timeZone: 'Asia/Dhaka', total: 50_000 }).textBn)
      .toBe('বর্তমান গতিতে 02:36-এ শেষ হবে, 09:00-এর সময়সীমার 6 ঘণ্টা 23 মিনিট আগে');
    expect(estimate({ remaining: 50_000, rate: 0.5, deadline, now, timeZone: 'Asia/Dhaka', total: 50_000 }).textBn).toMatch(/^সতর্কতা: .* পরে$/);
    expect(estimate({ remaining: 0, rate: 0, deadline, now, timeZone: 'Asia/Dhaka', total: 49_992 }).textBn).toBe('সব 49,992টি স্লিপ সম্পন্ন');
  });
});

describe('slipStages', () => {
  const counts = (c: Partial<ReturnType<typeof emptyCounts>>) => ({ ...emptyCounts(), ...c });
  it('counts each slip once: a rendered slip is counted by its email job, not again by its render', () => {
    // 10 slips: 6 sent, 1 email running, 1 email waiting, 1 render running, 1 not yet enqueued.
    const render = counts({ done: 8, running: 1 });
    const email = counts({ done: 6, running: 1, queued: 1 });
    expect(slipStages(render, email, 10)).toEqual({ done: 6, running: 2, queued: 2, retrying: 0, failed: 0 });
  });
  it('adds up to the slip count mid-run at 50,000 (the story: 49,992 sent, 8 stuck)', () => {
    const render = counts({ done: 50_000 });
    const email = counts({ done: 49_992, failed: 8 });
    const slips = slipStages(render, email, 50_000);
    expect(slips).toEqual({ done: 49_992, running: 0, queued: 0, retrying: 0, failed: 8 });
  });
});

describe('resendStage', () => {
  it("only moves forward along the jobs' ways (render retried or handed back, email retried)", () => {
    // A resend's two jobs step by step; the email job is written before the render is marked done.
    const steps: Array<[JobStatus, boolean, JobStatus | null]> = [
      ['queued', false, null], ['running', true, null], ['retrying', true, null], ['running', true, null],
      ['queued', true, null], // handed back at a worker's shutdown
      ['running', true, null], ['running', true, 'queued'], ['done', true, 'queued'], ['done', true, 'running'], ['done', true, 'retrying'],
      ['done', true, 'queued'], ['done', true, 'running'], ['done', true, 'done'],
    ];
    const stages = steps.map(([status, started, email]) => resendStage({ status, started }, email));
    const order = stages.map((s) => RESEND_STAGES.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect([...new Set(stages)]).toEqual(['queued', 'rendering', 'sending', 'done']);
  });
  it('is failed when either job failed', () => {
    expect(resendStage({ status: 'failed', started: true }, null)).toBe('failed');
    expect(resendStage({ status: 'done', started: true }, 'failed')).toBe('failed');
  });
});
