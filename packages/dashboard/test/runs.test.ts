import { slipDeadline } from '@beton/payroll/month';
import { describe, expect, it } from 'vitest';
import { resendStage, RESEND_STAGES } from '../src/employees.ts';
import { estimate, queueAhead } from '../src/runs.ts';
import { slipStages } from '../src/slip-states.ts';
import { emptyCounts, type JobStatus } from '../src/types.ts';

describe('slipDeadline (luxon, the company zone)', () => {
  it("is 09:00 Dhaka on the 1st after the paid month: the 2026-11 run's slips by 1 December 09:00", () => {
    expect(slipDeadline('2026-11', 'Asia/Dhaka').toISOString()).toBe('2026-12-01T03:00:00.000Z');
  });
  it('does not depend on when the run started (a run of 2026-11 started on 3 December is late, not due in January)', () => {
    // The old rule took "the next 1st" after the start: 1 January, 688 h away. The month decides.
    expect(slipDeadline('2026-11', 'Asia/Dhaka').getTime()).toBeLessThan(new Date('2026-12-03T10:00:00Z').getTime());
  });
  it('crosses the year end and honours the company deadline and zone, summer time included', () => {
    expect(slipDeadline('2026-12', 'Asia/Dhaka').toISOString()).toBe('2027-01-01T03:00:00.000Z');
    expect(slipDeadline('2026-11', 'Asia/Dhaka', '08:30').toISOString()).toBe('2026-12-01T02:30:00.000Z');
    expect(slipDeadline('2026-03', 'Europe/London').toISOString()).toBe('2026-04-01T08:00:00.000Z'); // BST, UTC+1
    expect(slipDeadline('2026-10', 'Europe/London').toISOString()).toBe('2026-11-01T09:00:00.000Z'); // GMT
  });
});

describe('estimate', () => {
  const deadline = new Date('2026-12-01T03:00:00Z'); // 09:00 Dhaka
  const now = new Date('2026-11-30T20:14:00Z'); // 02:14 Dhaka
  const base = { deadline, now, timeZone: 'Asia/Dhaka', completedAt: null, failed: 0 } as const;
  const finishIn = (remaining: number, rate: number) => new Date(now.getTime() + (remaining / rate) * 1000);
  it("finishes at hh:mm on the day, X before the deadline with its date (the run's rate: 1,000 slips at 0.62/s)", () => {
    const eta = estimate({ ...base, remaining: 1_000, rate: 0.62, finishAt: finishIn(1_000, 0.62), basis: 'run-rate', total: 1_200 });
    expect(eta.kind).toBe('on-time');
    expect(eta.text).toBe("At this run's rate (0.6 slips/s) finishes at 02:40 on 1 Dec 2026, 6 h 19 min before the deadline (09:00 on 1 Dec 2026)");
  });
  it('warns when the rate misses the deadline (the old loop: one slip per 2 s)', () => {
    const eta = estimate({ ...base, remaining: 50_000, rate: 0.5, finishAt: finishIn(50_000, 0.5), basis: 'run-rate', total: 50_000 });
    expect(eta.kind).toBe('late');
    expect(eta.text).toMatch(
      /^Warning: at this run's rate \(0\.5 slips\/s\) finishes at \d\d:\d\d on 2 Dec 2026, 21 h \d+ min after the deadline \(09:00 on 1 Dec 2026\)$/,
    );
  });
  it('a deadline already behind is said once and calmly, with when the last slip goes (no warning, no "after the deadline")', () => {
    const later = new Date('2026-12-03T04:00:00Z'); // 3 Dec 10:00 Dhaka: a run of 2026-11 started late
    const eta = estimate({ ...base, now: later, remaining: 100, rate: 1, finishAt: new Date(later.getTime() + 100_000), basis: 'run-rate', total: 100 });
    expect(eta.facts.case).toBe('after-deadline');
    expect(eta.text).toBe(
      "The deadline, 09:00 on 1 Dec 2026, has passed; the slips still go out. At this run's rate (1.0 slips/s) the last goes at 10:01 on 3 Dec 2026",
    );
    expect(eta.text.match(/deadline/g)).toHaveLength(1);
  });
  it('never absurd: more than a week out is said in words, not as a date', () => {
    const eta = estimate({ ...base, remaining: 50_000, rate: 0.01, finishAt: finishIn(50_000, 0.01), basis: 'run-rate', total: 50_000 });
    expect(eta).toMatchObject({ kind: 'late' });
    expect(eta.text).toBe("Warning: at this run's rate (0.0 slips/s) it would take more than a week; the deadline is 09:00 on 1 Dec 2026");
  });
  it('from the queue ahead before the run starts; measuring at first; no estimate without sending; done with the counts', () => {
    expect(estimate({ ...base, remaining: 100, rate: 37, finishAt: finishIn(5_000, 37), basis: 'queue', total: 100 }).text).toBe(
      'From the queue ahead (37 slips/s sent now) finishes at 02:16 on 1 Dec 2026, 6 h 43 min before the deadline (09:00 on 1 Dec 2026)',
    );
    expect(estimate({ ...base, remaining: 10, rate: null, finishAt: null, basis: 'none', total: 10, measuring: true }).text).toBe(
      'Its first slips are going out; measuring the rate…',
    );
    expect(estimate({ ...base, remaining: 10, rate: null, finishAt: null, basis: 'none', total: 10 }).kind).toBe('idle');
    const done = estimate({
      ...base,
      remaining: 0,
      rate: null,
      finishAt: null,
      basis: 'none',
      total: 10,
      completedAt: new Date('2026-11-30T20:31:00Z'),
      failed: 2,
    });
    expect(done).toEqual({
      kind: 'done',
      text: 'All 10 slips handled (completed at 02:31 on 1 Dec 2026); 2 need attention',
      textBn: 'সব 10টি স্লিপ সম্পন্ন (1 ডিসেম্বর, 2026, 02:31-এ শেষ); 2টিতে মনোযোগ দরকার',
      // What the console writes the line from, in the viewer's language (apps/web/src/components/eta-line.tsx).
      facts: {
        case: 'done',
        total: 10,
        failed: 2,
        completedAt: new Date('2026-11-30T20:31:00Z'),
        deadline: base.deadline,
        timeZone: 'Asia/Dhaka',
        passedMs: 0,
        basis: 'none',
        rate: null,
        finishAt: null,
        marginMs: null,
      },
    });
    expect(estimate({ ...base, remaining: 100, rate: 37, finishAt: finishIn(5_000, 37), basis: 'queue', total: 100 }).facts).toMatchObject({
      case: 'on-time',
      basis: 'queue',
      rate: 37,
      marginMs: deadline.getTime() - finishIn(5_000, 37).getTime(),
    });
  });
});

describe('estimate in Bengali', () => {
  const deadline = new Date('2026-12-01T03:00:00Z');
  const now = new Date('2026-11-30T20:14:00Z');
  it('says the same as the English line', () => {
    const base = { deadline, now, timeZone: 'Asia/Dhaka', completedAt: null, failed: 0, basis: 'run-rate' as const };
    expect(estimate({ ...base, remaining: 50_000, rate: 37, finishAt: new Date(now.getTime() + (50_000 / 37) * 1000), total: 50_000 }).textBn).toBe(
      'এই রানের গতিতে (37 স্লিপ/সেকেন্ড) 1 ডিসেম্বর, 2026, 02:36-এ শেষ হবে, সময়সীমার (1 ডিসেম্বর, 2026, 09:00) 6 ঘণ্টা 23 মিনিট আগে',
    );
    expect(estimate({ ...base, remaining: 50_000, rate: 0.5, finishAt: new Date(now.getTime() + 100_000_000), total: 50_000 }).textBn).toMatch(
      /^সতর্কতা: .* পরে$/,
    );
  });
});

describe('queueAhead (fair share)', () => {
  it("a run that has not started stands at the queue's front: nothing of the others is ahead of its first slip", () => {
    expect(
      queueAhead({ open: 100, total: 100 }, [
        { open: 500, total: 1_000 },
        { open: 20, total: 40 },
      ]),
    ).toEqual({ first: 0, last: 620 });
  });
  it('a run further along than another waits for that one to catch up to it', () => {
    // This run is 50 % through; the other only 10 %: 40 of its 90 % remaining lie ahead.
    expect(queueAhead({ open: 50, total: 100 }, [{ open: 900, total: 1_000 }])).toEqual({ first: 400, last: 950 });
  });
});

describe('slipStages', () => {
  const counts = (c: Partial<ReturnType<typeof emptyCounts>>) => ({ ...emptyCounts(), ...c });
  it('counts each slip once: a rendered slip is counted by its email job, not again by its render', () => {
    // 10 slips: 6 sent, 1 email running, 1 email waiting, 1 render running, 1 render waiting.
    const render = counts({ done: 8, running: 1, queued: 1 });
    const email = counts({ done: 6, running: 1, queued: 1 });
    expect(slipStages(render, email, 10)).toEqual({ slips: { done: 6, running: 2, queued: 2, retrying: 0, failed: 0 }, withoutJob: 0 });
  });
  it('leaves out superseded jobs: a slip fixed by a resend is counted by the resend, once', () => {
    // 5 slips: 3 sent by the run; 1 failed, then resent and delivered (its failed email job
    // superseded, its resend's render and email done); 1 failed, not yet fixed.
    const render = counts({ done: 6 });
    const email = counts({ done: 4, superseded: 1, failed: 1 });
    expect(slipStages(render, email, 5)).toEqual({ slips: { done: 4, running: 0, queued: 0, retrying: 0, failed: 1 }, withoutJob: 0 });
  });
  it('a slip whose job an admin discarded is neither open nor failed (the run can complete)', () => {
    expect(slipStages(counts({ done: 10 }), counts({ done: 9 }), 10)).toEqual({
      slips: { done: 9, running: 0, queued: 0, retrying: 0, failed: 0 },
      withoutJob: 1,
    });
  });
});

describe('resendStage', () => {
  it("only moves forward along the jobs' ways (render retried or handed back, email retried)", () => {
    // A resend's two jobs step by step; the email job is written before the render is marked done.
    const steps: Array<[JobStatus, boolean, JobStatus | null]> = [
      ['queued', false, null],
      ['running', true, null],
      ['retrying', true, null],
      ['running', true, null],
      ['queued', true, null], // handed back at a worker's shutdown
      ['running', true, null],
      ['running', true, 'queued'],
      ['done', true, 'queued'],
      ['done', true, 'running'],
      ['done', true, 'retrying'],
      ['done', true, 'queued'],
      ['done', true, 'running'],
      ['done', true, 'done'],
    ];
    const stages = steps.map(([status, started, email]) => resendStage({ status, started }, email));
    const order = stages.map((s) => RESEND_STAGES.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect([...new Set(stages)]).toEqual(['queued', 'rendering', 'sending', 'done']);
  });
  it('is done when another attempt at the slip delivered it (superseded)', () => {
    expect(resendStage({ status: 'superseded', started: false }, null)).toBe('done');
    expect(resendStage({ status: 'done', started: true }, 'superseded')).toBe('done');
  });
  it('is failed when either job failed', () => {
    expect(resendStage({ status: 'failed', started: true }, null)).toBe('failed');
    expect(resendStage({ status: 'done', started: true }, 'failed')).toBe('failed');
  });
});
