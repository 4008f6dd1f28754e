import { renderSlipJob as renderSlip, sendReminderEmailJob as sendReminderEmail, sendSlipEmailJob as sendSlipEmail } from '@beton/payroll/jobs';
import { RUNNING_JOBS_FROM, staleRunningCondition, staleThresholdMsSql, strandedWaitingFrom, stuckAfterSecondsSql } from '@beton/jobs/job-conditions';
import { DEFAULT_STALE_HEARTBEAT_MS } from '@beton/jobs/sweeper';
import { OPEN_STATUSES } from '@beton/jobs/client';
import { statusListSql } from '@beton/db/status-machine';
import { remindersAt } from '@beton/payroll/actions';
import { slipDeadline } from '@beton/payroll/month';
import { describeActors, type Actor } from '@beton/db';
import { countEmployeesPaidInMonth } from '@beton/people/salary';
import { AppError, notFound } from './errors.ts';
import { formatDuration, formatDurationBn, localWhen } from './time.ts';
import { slipStages, type SlipStageCounts } from './slip-states.ts';
import { emptyCounts, type Pool, type StatusCounts } from './types.ts';

// Task names in SQL come from the definitions, never string literals.
export const SLIP_RENDER_TASK = renderSlip.name;
export const SLIP_EMAIL_TASK = sendSlipEmail.name;
export const REMINDER_TASK = sendReminderEmail.name;
/** The engine's open statuses (queued, running, retrying) as an SQL list. */
const OPEN_JOBS_SQL = statusListSql(OPEN_STATUSES);
/** A run's own rate is measured over at most this window (since its first slip went, if later). */
export const THROUGHPUT_WINDOW_S = 300;
/** A rate measured over less than this is not shown (a couple of slips over a second says nothing). */
export const MIN_RATE_SPAN_S = 5;
/** An estimate further out than this is not a time any more: "more than a week at this rate". */
export const MAX_ESTIMATE_MS = 7 * 24 * 3600_000;

export interface RunProgress {
  id: string;
  month: string;
  /** enqueuing (its fan-out runs) → running → completed (no slip open; a resend opens it again). */
  status: string;
  startedAt: Date;
  /** When no slip was open any more (the last time it completed); null while running. */
  completedAt: Date | null;
  approvedAt: Date | null;
  /** Who approved it, as a page names them (HR's pages; null on the schedulers' metric). */
  approvedBy: Actor | null;
  /** When the approval reminders go (approved + 30 min); null before approval. */
  remindersAt: Date | null;
  /** The approval reminders (delayed jobs) by status: queued ones wait for `remindersAt`. */
  reminders: StatusCounts;
  employeeCount: number;
  /** The run's jobs per status, per task (render, email); resends of its month included, extra copies not. */
  render: StatusCounts;
  email: StatusCounts;
  /**
   * Slips per stage. Each slip has one live attempt (HR's resend closes the failed one before
   * it as superseded, and a delivered slip closes the others): done when its email was sent,
   * running/retrying/failed when its render or email job is, queued when one waits.
   */
  slips: SlipStageCounts;
  /** Employees of the run whose slip has no job (an admin discarded it): neither open nor failed. */
  withoutJob: number;
  /** Slips sent (= slips.done). */
  sent: number;
  /**
   * Slip jobs that are not moving (the glossary's "stuck", not "failed"): running longer than
   * 10 min or untouched by any heartbeat for the sweeper's stale threshold, or waiting past due by
   * that threshold with no wake-up a worker can take. The sweeper puts them back by itself.
   */
  stuck: number;
  /** Slips that need attention: their last attempt failed (the employees list's "failed"). */
  failed: number;
  /** Running longer than 10 min, or no heartbeat for the stale threshold. */
  runningTooLong: number;
  /** Queued or retrying, past due by the stale threshold, and no worker can take them. */
  stranded: number;
  /** Slips still on their way (queued, running, retrying). */
  remaining: number;
  /** The story's one line: "49,992 sent, 8 failed" (", 2 stuck" when some are not moving). */
  line: string;
  /** The same line in Bengali. */
  lineBn: string;
  /** The run's own rate: slips sent per second over the last 5 minutes (or since its first, if later); null until measurable. */
  throughputPerSecond: number | null;
  /** 09:00 (the company's deadline) on the 1st after the paid month, in the company's zone. */
  deadline: Date;
  /** The deadline with its date: "09:00 on 1 Dec 2026". */
  deadlineText: string;
  deadlineTextBn: string;
  timeZone: string;
  /** When the run's slips started and are expected to start and finish. */
  schedule: RunSchedule;
  eta: Eta;
}

export interface RunSchedule {
  /** The run's first slip sent; null before. */
  firstSentAt: Date | null;
  /** Before its first slip: when it is expected, from the queue ahead of it. */
  expectedStartAt: Date | null;
  /** When its last open slip is expected to go; null when done or not estimable. */
  expectedFinishAt: Date | null;
  /** 'run-rate': the run's own measured rate; 'queue': the queue ahead and the rate of all sending; 'none'. */
  basis: 'run-rate' | 'queue' | 'none';
  /** Its first slips went out less than MIN_RATE_SPAN_S ago: no estimate yet, and none missed. */
  measuring: boolean;
  /** Before its first slip: open slips of other runs ahead of its first one in the queue. */
  slipsAhead: number | null;
}

/**
 * What the estimate line says, as data: the console writes it in the viewer's language with its
 * own number, date and duration formats. `case`: done (all handled), measuring (first slips
 * seconds old), no-rate (nothing sent lately), over-a-week, on-time, late (a deadline still ahead
 * that the run would miss: a warning), after-deadline (the deadline was already behind: said once,
 * calmly, with when the last slip goes). `passedMs` > 0: the deadline passed that long ago;
 * `marginMs`: deadline − finish (negative: late).
 */
export interface EtaFacts {
  case: 'done' | 'measuring' | 'no-rate' | 'over-a-week' | 'on-time' | 'late' | 'after-deadline';
  total: number;
  failed: number;
  completedAt: Date | null;
  deadline: Date;
  timeZone: string;
  passedMs: number;
  basis: RunSchedule['basis'];
  rate: number | null;
  finishAt: Date | null;
  marginMs: number | null;
}

/** `text` in English, `textBn` in Bengali (the API's and the CLI's sentence); `facts` for the console. */
export type Eta =
  | { kind: 'done'; text: string; textBn: string; facts: EtaFacts }
  | { kind: 'idle'; text: string; textBn: string; facts: EtaFacts }
  | { kind: 'on-time' | 'late'; finishAt: Date; text: string; textBn: string; facts: EtaFacts };

/**
 * The estimate line. `rate`: slips per second this run's estimate uses (its own, or all sending
 * while it waits in the queue); `finishAt` is never before now, never more than a week out.
 */
export function estimate(p: {
  remaining: number;
  finishAt: Date | null;
  basis: RunSchedule['basis'];
  rate: number | null;
  deadline: Date;
  now: Date;
  timeZone: string;
  total: number;
  completedAt: Date | null;
  failed: number;
  /** Slips of the run went out moments ago: too few to tell a rate yet. */
  measuring?: boolean;
}): Eta {
  const passedMs = Math.max(0, p.now.getTime() - p.deadline.getTime());
  const facts = (c: EtaFacts['case'], finishAt: Date | null = null, marginMs: number | null = null): EtaFacts => ({
    case: c,
    total: p.total,
    failed: p.failed,
    completedAt: p.completedAt,
    deadline: p.deadline,
    timeZone: p.timeZone,
    passedMs,
    basis: p.basis,
    rate: p.rate,
    finishAt,
    marginMs,
  });
  const total = p.total.toLocaleString('en-US');
  const deadline = localWhen(p.deadline, p.timeZone);
  if (p.remaining <= 0) {
    const at = p.completedAt ? localWhen(p.completedAt, p.timeZone) : null;
    const attention = p.failed ? `; ${p.failed.toLocaleString('en-US')} need attention` : '';
    const attentionBn = p.failed ? `; ${p.failed.toLocaleString('en-US')}টিতে মনোযোগ দরকার` : '';
    return {
      kind: 'done',
      facts: facts('done'),
      text: `All ${total} slips handled${at ? ` (completed at ${at.en})` : ''}${attention}`,
      textBn: `সব ${total}টি স্লিপ সম্পন্ন${at ? ` (${at.bn}-এ শেষ)` : ''}${attentionBn}`,
    };
  }
  // A deadline already behind (a late run, e.g. last month's started today) is said once and
  // calmly: the slips still go out; only a deadline still ahead that the run would miss warns.
  const passed = passedMs > 0;
  const passedText = passed
    ? { en: `The deadline, ${deadline.en}, has passed; the slips still go out. `, bn: `সময়সীমা ${deadline.bn} পেরিয়ে গেছে; স্লিপগুলো তবুও যাবে। ` }
    : { en: '', bn: '' };
  if ((!p.finishAt || !p.rate) && p.measuring) {
    return {
      kind: 'idle',
      facts: facts('measuring'),
      text: `${passedText.en}Its first slips are going out; measuring the rate…`,
      textBn: `${passedText.bn}প্রথম স্লিপগুলো যাচ্ছে; গতি মাপা হচ্ছে…`,
    };
  }
  if (!p.finishAt || !p.rate) {
    return {
      kind: 'idle',
      facts: facts('no-rate'),
      text: `${passedText.en}No slip sent in the last 5 minutes, so no estimate yet`,
      textBn: `${passedText.bn}গত 5 মিনিটে কোনো স্লিপ পাঠানো হয়নি, তাই এখনও অনুমান নেই`,
    };
  }
  const rate = p.rate.toFixed(p.rate < 10 ? 1 : 0);
  const how =
    p.basis === 'run-rate'
      ? { en: `At this run's rate (${rate} slips/s)`, bn: `এই রানের গতিতে (${rate} স্লিপ/সেকেন্ড)` }
      : { en: `From the queue ahead (${rate} slips/s sent now)`, bn: `সামনের সারি থেকে (এখন ${rate} স্লিপ/সেকেন্ড)` };
  if (p.finishAt.getTime() - p.now.getTime() > MAX_ESTIMATE_MS) {
    return {
      kind: 'late',
      finishAt: p.finishAt,
      facts: facts('over-a-week', p.finishAt),
      text: passed
        ? `${passedText.en}${how.en} it would take more than a week`
        : `Warning: ${how.en.toLowerCase()} it would take more than a week; the deadline is ${deadline.en}`,
      textBn: passed ? `${passedText.bn}${how.bn} এক সপ্তাহের বেশি লাগবে` : `সতর্কতা: ${how.bn} এক সপ্তাহের বেশি লাগবে; সময়সীমা ${deadline.bn}`,
    };
  }
  if (passed) {
    const last = localWhen(p.finishAt, p.timeZone);
    return {
      kind: 'late',
      finishAt: p.finishAt,
      facts: facts('after-deadline', p.finishAt, p.deadline.getTime() - p.finishAt.getTime()),
      text: `${passedText.en}${how.en} the last goes at ${last.en}`,
      textBn: `${passedText.bn}${how.bn} শেষটি ${last.bn}-এ যাবে`,
    };
  }
  const at = localWhen(p.finishAt, p.timeZone);
  const margin = p.deadline.getTime() - p.finishAt.getTime();
  return margin >= 0
    ? {
        kind: 'on-time',
        finishAt: p.finishAt,
        facts: facts('on-time', p.finishAt, margin),
        text: `${how.en} finishes at ${at.en}, ${formatDuration(margin)} before the deadline (${deadline.en})`,
        textBn: `${how.bn} ${at.bn}-এ শেষ হবে, সময়সীমার (${deadline.bn}) ${formatDurationBn(margin)} আগে`,
      }
    : {
        kind: 'late',
        finishAt: p.finishAt,
        facts: facts('late', p.finishAt, margin),
        text: `Warning: ${how.en.toLowerCase()} finishes at ${at.en}, ${formatDuration(margin)} after the deadline (${deadline.en})`,
        textBn: `সতর্কতা: ${how.bn} ${at.bn}-এ শেষ হবে, সময়সীমার (${deadline.bn}) ${formatDurationBn(margin)} পরে`,
      };
}

/**
 * The run's one line with the glossary's words (the API's and the CLI's; the console writes its
 * own from the counts): "49,992 sent, 8 failed", and ", 2 stuck" when some slips are not moving.
 */
export function runLine(sent: number, failed: number, stuck: number): { en: string; bn: string } {
  const n = (x: number) => x.toLocaleString('en-US');
  return {
    en: `${n(sent)} sent, ${n(failed)} failed${stuck > 0 ? `, ${n(stuck)} stuck` : ''}`,
    bn: `${n(sent)}টি পাঠানো হয়েছে, ${n(failed)}টি ব্যর্থ${stuck > 0 ? `, ${n(stuck)}টি আটকে আছে` : ''}`,
  };
}

/**
 * Where a run stands in the queue (R13 fair share): every run's slips are spread over the
 * queue in proportion (fairSharePriority), so the open slips of a run that is a fraction f
 * through lie evenly over [f, 1] of the queue's order. Slips of other runs ahead of a run's
 * first open slip, and of its last (every open slip of every run, since all end together).
 */
export function queueAhead(run: { open: number; total: number }, others: Array<{ open: number; total: number }>): { first: number; last: number } {
  const front = (r: { open: number; total: number }) => (r.total > 0 ? 1 - r.open / r.total : 1);
  const f = front(run);
  let first = 0;
  let last = run.open;
  for (const o of others) {
    last += o.open;
    const g = front(o);
    if (o.open > 0 && f > g) first += o.open * Math.min(1, (f - g) / (1 - g));
  }
  return { first: Math.round(first), last };
}

interface RunRow {
  id: string;
  month: string;
  status: string;
  started_at: Date;
  completed_at: Date | null;
  approved_at: Date | null;
  approved_by: string | null;
  employee_count: number;
  time_zone: string;
  deadline: string;
}

// The run lookups stay SQL: Prisma Client made the same one-row lookup ×2.9 slower (bench:prisma,
// 0.3 → 0.9 ms p50) and HR's progress read has a 20 ms budget.
const RUN_COLUMNS = `r.id, r.month, r.status, r.started_at, r.completed_at, r.approved_at, r.approved_by, r.employee_count, c.time_zone, c.deadline`;

/** Progress of every payroll run of one company (newest first). HR-scoped: `companyId` is the session's. */
export async function listRunProgress(pool: Pool, companyId: string, options: { limit?: number; now?: Date } = {}): Promise<RunProgress[]> {
  const { rows } = await pool.query<RunRow>(
    `select ${RUN_COLUMNS} from payroll_runs r join companies c on c.id = r.company_id
     where r.company_id = $1 order by r.month desc limit $2`,
    [companyId, options.limit ?? 12],
  );
  return progressOf(pool, companyId, rows, options.now ?? new Date());
}

/** One run's progress; a run of another company is NOT_FOUND. */
export async function runProgress(pool: Pool, companyId: string, runId: string, now = new Date()): Promise<RunProgress> {
  const { rows } = await pool.query<RunRow>(
    `select ${RUN_COLUMNS} from payroll_runs r join companies c on c.id = r.company_id where r.company_id = $1 and r.id = $2`,
    [companyId, runId],
  );
  if (!rows[0]) throw notFound('Payroll run');
  return (await progressOf(pool, companyId, rows, now))[0]!;
}

/** Sent slips per second over the window, measured from `since` if later than the window's start; null when too short. */
function rateOf(n: number, since: Date | null, now: Date): number | null {
  if (!since || n === 0) return null;
  const spanS = (now.getTime() - Math.max(since.getTime(), now.getTime() - THROUGHPUT_WINDOW_S * 1000)) / 1000;
  return spanS >= MIN_RATE_SPAN_S ? n / spanS : null;
}

/** `companyId`: the runs' company (HR's pages), or null for runs of every company (the deadline metric). */
async function progressOf(pool: Pool, companyId: string | null, runs: RunRow[], now: Date): Promise<RunProgress[]> {
  if (runs.length === 0) return [];
  // Narrow queries instead of one wide one: counts by (task, status) from the counters the
  // triggers on `jobs` keep (a few rows, not 100,000); the running jobs (RUNNING_JOBS_FROM: as
  // many as are in flight); per run, its first email sent and those of the last 5 minutes (an
  // index range over their attempts' (run, task, finished_at)).
  const ids = runs.map((r) => r.id);
  const t = staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS);
  const [counts, tooLong, sending] = await Promise.all([
    pool.query<{ run: string; task: string; status: keyof StatusCounts; n: number }>(
      `select payroll_run_id as run, task_name as task, status, n
       from run_job_counts where payroll_run_id = any($1::uuid[]) and task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}', '${REMINDER_TASK}')`,
      [ids],
    ),
    pool.query<{ run: string; n: number }>(
      `select j.payroll_run_id as run, count(*)::int as n from ${RUNNING_JOBS_FROM}
       where (a.started_at < $2::timestamptz - make_interval(secs => ${stuckAfterSecondsSql()}) or ${staleRunningCondition(t)}) and j.payroll_run_id = any($1::uuid[])
         and j.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
         -- The same runs and tasks on the attempt (copied at its claim): its (run, task, finished_at)
         -- index reads these runs' open attempts, not every open attempt of every tenant.
         and a.payroll_run_id = any($1::uuid[]) and a.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
       group by 1`,
      [ids, now],
    ),
    pool.query<{ run: string; first_sent: Date | null; recent: number; recent_from: Date | null }>(
      `select r.id as run,
              (select a.finished_at from job_attempts a where a.payroll_run_id = r.id and a.task_name = '${SLIP_EMAIL_TASK}' and a.outcome = 'done' and a.finished_at <= $2
               order by a.finished_at limit 1) as first_sent,
              w.n::int as recent, w.since as recent_from
       from unnest($1::uuid[]) as r(id)
       cross join lateral (select count(*) as n, min(a.finished_at) as since from job_attempts a
                           where a.payroll_run_id = r.id and a.task_name = '${SLIP_EMAIL_TASK}' and a.outcome = 'done'
                             and a.finished_at > $2::timestamptz - make_interval(secs => $3) and a.finished_at <= $2) w`,
      [ids, now, THROUGHPUT_WINDOW_S],
    ),
  ]);
  // The open slips of every run still running (the queue a waiting run stands in), only when a
  // run has nothing sent yet: it reads every running run's counters (600 runs at 500,000
  // employees), which a run already sending does not need (bench:scale).
  let activeRuns: Promise<Array<{ run: string; open: number; total: number }>> | undefined;
  const active = () =>
    (activeRuns ??= pool
      .query<{ run: string; open: number; total: number }>(
        `select r.id as run, r.employee_count as total,
              coalesce(sum(c.n) filter (where c.status in ${OPEN_JOBS_SQL}), 0)::int as open
       from payroll_runs r left join run_job_counts c on c.payroll_run_id = r.id and c.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
       where r.status = 'running' group by r.id`,
      )
      .then((r) => r.rows));

  // The rate of all slip emails, only when a run waits in the queue with nothing sent yet.
  let allSending: { rate: number | null } | undefined;
  const allRate = async () => {
    if (!allSending) {
      const { rows } = await pool.query<{ n: number; since: Date | null }>(
        `select count(*)::int as n, min(finished_at) as since from job_attempts
         where finished_at > $1::timestamptz - make_interval(secs => $2) and finished_at <= $1 and task_name = '${SLIP_EMAIL_TASK}' and outcome = 'done'`,
        [now, THROUGHPUT_WINDOW_S],
      );
      allSending = { rate: rateOf(rows[0]?.n ?? 0, rows[0]?.since ?? null, now) };
    }
    return allSending.rate;
  };

  // Stranded slip jobs, only for runs that have jobs waiting (the counters say so): read from
  // the wake-ups no worker will take (a few rows), not from the run's jobs.
  const waitingRuns = ids.filter((id) =>
    counts.rows.some((r) => r.run === id && r.task !== REMINDER_TASK && (r.status === 'queued' || r.status === 'retrying') && r.n > 0),
  );
  const stranded =
    waitingRuns.length === 0
      ? []
      : (
          await pool.query<{ run: string; n: number }>(
            `select j.payroll_run_id as run, count(*)::int as n from ${strandedWaitingFrom(t)}
       and ($1::uuid is null or j.company_id = $1) and j.payroll_run_id = any($2::uuid[]) and j.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
     group by 1`,
            [companyId, waitingRuns],
          )
        ).rows;

  const approvers =
    companyId === null
      ? new Map<string, Actor>()
      : await describeActors(
          pool,
          runs.map((r) => r.approved_by),
        );
  return Promise.all(
    runs.map(async (run) => {
      const render = emptyCounts();
      const email = emptyCounts();
      const reminders = emptyCounts();
      for (const row of counts.rows) {
        if (row.run !== run.id) continue;
        (row.task === SLIP_EMAIL_TASK ? email : row.task === REMINDER_TASK ? reminders : render)[row.status] += row.n;
      }
      const runningTooLong = tooLong.rows.find((r) => r.run === run.id)?.n ?? 0;
      const total = run.employee_count;
      const { slips, withoutJob } = slipStages(render, email, total);
      const sent = slips.done;
      const failed = slips.failed;
      const strandedJobs = stranded.find((r) => r.run === run.id)?.n ?? 0;
      const stuck = runningTooLong + strandedJobs;
      const remaining = slips.queued + slips.running + slips.retrying;
      const line = runLine(sent, failed, stuck);
      const deadline = slipDeadline(run.month, run.time_zone, run.deadline);
      const deadlineWhen = localWhen(deadline, run.time_zone);

      const own = sending.rows.find((r) => r.run === run.id);
      const firstSentAt = own?.first_sent ?? null;
      const ownRate = rateOf(own?.recent ?? 0, own?.recent_from ?? null, now);
      const measuring = !ownRate && (own?.recent ?? 0) > 0;
      const schedule: RunSchedule = { firstSentAt, expectedStartAt: null, expectedFinishAt: null, basis: 'none', measuring, slipsAhead: null };
      let rate: number | null = null;
      const at = (slips: number, perSecond: number) => new Date(now.getTime() + Math.min(MAX_ESTIMATE_MS + 1, (slips / perSecond) * 1000));
      if (remaining > 0 && ownRate) {
        rate = ownRate;
        schedule.basis = 'run-rate';
        schedule.expectedFinishAt = at(remaining, ownRate);
      } else if (remaining > 0 && !firstSentAt) {
        // Nothing of this run sent yet: where it stands in the queue, at the rate of all sending.
        const others = (await active()).filter((r) => r.run !== run.id);
        const ahead = queueAhead({ open: remaining, total }, others);
        schedule.slipsAhead = ahead.first;
        const all = await allRate();
        if (all) {
          rate = all;
          schedule.basis = 'queue';
          schedule.expectedStartAt = at(ahead.first, all);
          schedule.expectedFinishAt = at(ahead.last, all);
        }
      }
      return {
        id: run.id,
        month: run.month,
        status: run.status,
        startedAt: run.started_at,
        completedAt: run.completed_at,
        approvedAt: run.approved_at,
        approvedBy: run.approved_by ? (approvers.get(run.approved_by) ?? null) : null,
        remindersAt: run.approved_at ? remindersAt(run.approved_at) : null,
        reminders,
        employeeCount: total,
        render,
        email,
        slips,
        withoutJob,
        sent,
        stuck,
        failed,
        runningTooLong,
        stranded: strandedJobs,
        remaining,
        line: line.en,
        lineBn: line.bn,
        throughputPerSecond: ownRate,
        deadline,
        deadlineText: deadlineWhen.en,
        deadlineTextBn: deadlineWhen.bn,
        timeZone: run.time_zone,
        schedule,
        eta: estimate({
          remaining,
          finishAt: schedule.expectedFinishAt,
          basis: schedule.basis,
          rate,
          deadline,
          now,
          timeZone: run.time_zone,
          total,
          completedAt: run.completed_at,
          failed,
          measuring,
        }),
      };
    }),
  );
}

/**
 * Every payroll run with slips still to handle (a render or email job queued, running or
 * retrying, from the counters), with its slack against its deadline: deadline − the expected
 * finish HR's card shows (from the run's own rate, or from the queue ahead before its slips
 * start). Negative: at the current rate it finishes late; −Infinity: no estimate (nothing
 * sent lately with slips left). A run whose first slips went out seconds ago (the card says
 * "measuring the rate") has no series until its rate is known: not late, not yet estimable. The schedulers report it as
 * beton_payroll_run_eta_slack_seconds{company, run}.
 */
export async function openRunsSlack(pool: Pool, now = new Date()): Promise<Array<{ company: string; run: string; slackSeconds: number }>> {
  const { rows } = await pool.query<RunRow & { company_id: string }>(
    `select ${RUN_COLUMNS}, r.company_id from payroll_runs r join companies c on c.id = r.company_id
     where r.id in (select payroll_run_id from run_job_counts
                    where task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}') and status in ${OPEN_JOBS_SQL} and n > 0)`,
  );
  const progress = await progressOf(pool, null, rows, now);
  return progress
    .filter((p) => p.remaining > 0 && !p.schedule.measuring)
    .map((p) => ({
      company: rows.find((r) => r.id === p.id)!.company_id,
      run: p.month,
      // The card's own estimate (the run's rate, or the queue ahead before its slips start).
      slackSeconds: p.schedule.expectedFinishAt ? (p.deadline.getTime() - p.schedule.expectedFinishAt.getTime()) / 1000 : -Infinity,
    }));
}

/** Guards the approve action: the run must belong to the company. Returns its month. */
export async function runForApproval(pool: Pool, companyId: string, runId: string): Promise<{ month: string; approvedAt: Date | null }> {
  const { rows } = await pool.query<{ month: string; approved_at: Date | null }>(
    `select month, approved_at from payroll_runs where company_id = $1 and id = $2`,
    [companyId, runId],
  );
  if (!rows[0]) throw notFound('Payroll run');
  return { month: rows[0].month, approvedAt: rows[0].approved_at };
}

/**
 * What "Approve payroll" would do, for the page to say before it asks: one reminder email to each
 * employee paid in the month, REMINDER_DELAY_MS after the approval (`remindersAt` if approved
 * now); or, already approved, when and by whom.
 */
export async function approvalPlan(
  pool: Pool,
  companyId: string,
  runId: string,
  now = new Date(),
): Promise<{ month: string; reminders: number; remindersAt: Date; approved: { at: Date; by: Actor | null } | null }> {
  const { rows } = await pool.query<{ month: string; approved_at: Date | null; approved_by: string | null }>(
    `select month, approved_at, approved_by from payroll_runs where company_id = $1 and id = $2`,
    [companyId, runId],
  );
  const run = rows[0];
  if (!run) throw notFound('Payroll run');
  const reminders = await countEmployeesPaidInMonth(pool, companyId, run.month);
  const by = run.approved_by ? (await describeActors(pool, [run.approved_by])).get(run.approved_by)! : null;
  return {
    month: run.month,
    reminders,
    remindersAt: remindersAt(run.approved_at ?? now),
    approved: run.approved_at ? { at: run.approved_at, by } : null,
  };
}

export { AppError };
