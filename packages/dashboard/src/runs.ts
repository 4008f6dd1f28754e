import { RUNNING_JOBS_FROM, staleRunningCondition, staleThresholdMsSql, strandedWaitingFrom } from '@beton/jobs/job-sets';
import { DEFAULT_STALE_HEARTBEAT_MS } from '@beton/jobs/sweeper';
import { remindersAt } from '@beton/payroll/actions';
import { AppError, notFound } from './errors.ts';
import { formatDuration, formatDurationBn, localHhMm, zonedTime } from './time.ts';
import { emptyCounts, STUCK_AFTER_MS, type Pool, type StatusCounts } from './types.ts';

export const SLIP_RENDER_TASK = 'render-slip';
export const SLIP_EMAIL_TASK = 'send-slip-email';
/** Throughput is measured over this window. */
export const THROUGHPUT_WINDOW_S = 300;

export interface RunProgress {
  id: string;
  month: string;
  status: string;
  startedAt: Date;
  approvedAt: Date | null;
  approvedBy: string | null;
  /** When the approval reminders go (approved + 30 min); null before approval. */
  remindersAt: Date | null;
  employeeCount: number;
  /** Jobs per status, per task (render, email). */
  render: StatusCounts;
  email: StatusCounts;
  /**
   * Slips per stage; they add up to `employeeCount`. A slip is done when its email is sent,
   * running/retrying/failed when its render or email job is, queued otherwise (its render
   * waits, or it is rendered and its email waits).
   */
  slips: StatusCounts;
  /** Slips whose email job is done. */
  sent: number;
  /**
   * Slip jobs that will not finish by themselves: failed, running longer than 10 min or untouched
   * by any heartbeat for the sweeper's stale threshold, or waiting past due by that threshold with
   * no wake-up a worker can take (issue 17: the numbers equal the provider's truth).
   */
  stuck: number;
  failed: number;
  /** Running longer than 10 min, or no heartbeat for the stale threshold. */
  runningTooLong: number;
  /** Queued or retrying, past due by the stale threshold, and no worker can take them. */
  stranded: number;
  /** Slips not yet sent and not failed. */
  remaining: number;
  /** The story's one line: "49,992 sent, 8 stuck". */
  line: string;
  /** The same line in Bengali. */
  lineBn: string;
  /** Emails done per second over the last 5 minutes. */
  throughputPerSecond: number;
  deadline: Date;
  eta: Eta;
}

/** `text` in English, `textBn` in Bengali. */
export type Eta =
  | { kind: 'done'; text: string; textBn: string }
  | { kind: 'idle'; text: string; textBn: string }
  | { kind: 'on-time' | 'late'; finishAt: Date; text: string; textBn: string };

/**
 * The delivery deadline of a run: `deadline` local time (default 09:00) on the 1st — the
 * run's own day when it started on a 1st (the scheduled 02:00 run), else the next 1st.
 */
export function runDeadline(startedAt: Date, timeZone: string, deadline = '09:00'): Date {
  const local = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(startedAt);
  const [y, m, d] = local.split('-').map(Number) as [number, number, number];
  const [hh, mm] = deadline.split(':').map(Number) as [number, number];
  if (d === 1) return zonedTime(timeZone, y, m, 1, hh, mm);
  return zonedTime(timeZone, m === 12 ? y + 1 : y, m === 12 ? 1 : m + 1, 1, hh, mm);
}

export function estimate(p: { remaining: number; rate: number; deadline: Date; now: Date; timeZone: string; total: number }): Eta {
  const total = p.total.toLocaleString('en-US');
  if (p.remaining <= 0) return { kind: 'done', text: `All ${total} slips handled`, textBn: `সব ${total}টি স্লিপ সম্পন্ন` };
  if (p.rate <= 0) return { kind: 'idle', text: 'No slips sent in the last 5 minutes; no estimate', textBn: 'গত 5 মিনিটে কোনো স্লিপ পাঠানো হয়নি; অনুমান নেই' };
  const finishAt = new Date(p.now.getTime() + (p.remaining / p.rate) * 1000);
  const margin = p.deadline.getTime() - finishAt.getTime();
  const at = localHhMm(finishAt, p.timeZone);
  const deadline = localHhMm(p.deadline, p.timeZone);
  return margin >= 0
    ? {
      kind: 'on-time', finishAt,
      text: `At the current rate finishes at ${at}, ${formatDuration(margin)} before the ${deadline} deadline`,
      textBn: `বর্তমান গতিতে ${at}-এ শেষ হবে, ${deadline}-এর সময়সীমার ${formatDurationBn(margin)} আগে`,
    }
    : {
      kind: 'late', finishAt,
      text: `Warning: at the current rate finishes at ${at}, ${formatDuration(margin)} after the ${deadline} deadline`,
      textBn: `সতর্কতা: বর্তমান গতিতে ${at}-এ শেষ হবে, ${deadline}-এর সময়সীমার ${formatDurationBn(margin)} পরে`,
    };
}

/**
 * Slips per stage from the job counts: each slip has one render job and, once rendered, one
 * email job, so a slip in the email stage is counted there and not again by its done render.
 */
export function slipStages(render: StatusCounts, email: StatusCounts, total: number): StatusCounts {
  const slips: StatusCounts = {
    done: email.done,
    running: render.running + email.running,
    retrying: render.retrying + email.retrying,
    failed: render.failed + email.failed,
    queued: 0,
  };
  // Render waiting + email waiting + rendered-but-email-not-yet-written + not yet enqueued.
  slips.queued = Math.max(0, total - slips.done - slips.running - slips.retrying - slips.failed);
  return slips;
}

interface RunRow {
  id: string; month: string; status: string; started_at: Date; approved_at: Date | null; approved_by: string | null;
  employee_count: number; time_zone: string; deadline: string;
}

const RUN_COLUMNS = `r.id, r.month, r.status, r.started_at, r.approved_at, r.approved_by, r.employee_count, c.time_zone, c.deadline`;

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

async function progressOf(pool: Pool, companyId: string, runs: RunRow[], now: Date): Promise<RunProgress[]> {
  if (runs.length === 0) return [];
  // Three narrow queries instead of one wide one: counts by (task, status) from the counters
  // the triggers on `jobs` keep (a few rows, not 100,000); the running jobs (RUNNING_JOBS_FROM:
  // as many as are in flight); the emails done recently, an index range over their attempts'
  // (run, task, finished_at).
  const ids = runs.map((r) => r.id);
  const t = staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS);
  const [counts, tooLong, recentDone] = await Promise.all([
    pool.query<{ run: string; task: string; status: keyof StatusCounts; n: number }>(
      `select payroll_run_id as run, task_name as task, status, n
       from run_job_counts where payroll_run_id = any($1::uuid[]) and task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')`,
      [ids],
    ),
    pool.query<{ run: string; n: number }>(
      `select j.payroll_run_id as run, count(*)::int as n from ${RUNNING_JOBS_FROM}
       where (a.started_at < $2::timestamptz - make_interval(secs => $3) or ${staleRunningCondition(t)}) and j.payroll_run_id = any($1::uuid[])
         and j.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
       group by 1`,
      [ids, now, STUCK_AFTER_MS / 1000],
    ),
    pool.query<{ run: string; n: number }>(
      `select payroll_run_id as run, count(*)::int as n from job_attempts
       where payroll_run_id = any($1::uuid[]) and task_name = '${SLIP_EMAIL_TASK}'
         and finished_at > $2::timestamptz - make_interval(secs => $3) and outcome = 'done'
       group by 1`,
      [ids, now, THROUGHPUT_WINDOW_S],
    ),
  ]);
  const rows = counts.rows;
  // Stranded slip jobs, only for runs that have jobs waiting (the counters say so): read from
  // the wake-ups no worker will take (a few rows), not from the run's jobs.
  const waitingRuns = ids.filter((id) => rows.some((r) => r.run === id && (r.status === 'queued' || r.status === 'retrying') && r.n > 0));
  const stranded = waitingRuns.length === 0 ? [] : (await pool.query<{ run: string; n: number }>(
    `select j.payroll_run_id as run, count(*)::int as n from ${strandedWaitingFrom(t)}
       and j.company_id = $1 and j.payroll_run_id = any($2::uuid[]) and j.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')
     group by 1`,
    [companyId, waitingRuns],
  )).rows;
  return runs.map((run) => {
    const render = emptyCounts();
    const email = emptyCounts();
    for (const row of rows) {
      if (row.run !== run.id) continue;
      (row.task === SLIP_EMAIL_TASK ? email : render)[row.status] += row.n;
    }
    const runningTooLong = tooLong.rows.find((r) => r.run === run.id)?.n ?? 0;
    const strandedJobs = stranded.find((r) => r.run === run.id)?.n ?? 0;
    const recent = recentDone.rows.find((r) => r.run === run.id)?.n ?? 0;
    const total = Math.max(run.employee_count, render.queued + render.running + render.retrying + render.done + render.failed);
    const sent = email.done;
    const failed = render.failed + email.failed;
    const stuck = failed + runningTooLong + strandedJobs;
    const remaining = Math.max(0, total - sent - failed);
    const [sentText, stuckText] = [sent.toLocaleString('en-US'), stuck.toLocaleString('en-US')];
    const throughputPerSecond = recent / THROUGHPUT_WINDOW_S;
    const deadline = runDeadline(run.started_at, run.time_zone, run.deadline);
    return {
      id: run.id, month: run.month, status: run.status, startedAt: run.started_at, approvedAt: run.approved_at, approvedBy: run.approved_by,
      remindersAt: run.approved_at ? remindersAt(run.approved_at) : null,
      employeeCount: total, render, email, slips: slipStages(render, email, total), sent, stuck, failed, runningTooLong, stranded: strandedJobs, remaining,
      line: `${sentText} sent, ${stuckText} stuck`,
      lineBn: `${sentText}টি পাঠানো হয়েছে, ${stuckText}টি আটকে আছে`,
      throughputPerSecond,
      deadline,
      eta: estimate({ remaining, rate: throughputPerSecond, deadline, now, timeZone: run.time_zone, total }),
    };
  });
}

/** Guards the approve action: the run must belong to the company. Returns its month. */
export async function runForApproval(pool: Pool, companyId: string, runId: string): Promise<{ month: string; approvedAt: Date | null }> {
  const { rows } = await pool.query<{ month: string; approved_at: Date | null }>(
    `select month, approved_at from payroll_runs where company_id = $1 and id = $2`, [companyId, runId],
  );
  if (!rows[0]) throw notFound('Payroll run');
  return { month: rows[0].month, approvedAt: rows[0].approved_at };
}

export { AppError };
