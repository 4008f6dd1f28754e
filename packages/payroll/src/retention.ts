/**
 * Retention (issue 20): nothing grows forever. A pass deletes, oldest first and in batches of
 * `batchSize` rows (each batch one short statement of its own: it locks only the rows it
 * deletes, which nobody else touches any more), what is past its retention period:
 *
 * - finished jobs (done or failed) older than `jobsMonths` (default 13), with their attempts
 *   (the foreign key cascades) — the counters the triggers keep follow the deletes;
 * - email delivery records past the same period (the idempotency record of a job that no
 *   longer exists), schedule due times and bank polls (the newest poll always stays: it is the
 *   next poll's start), and worker rows stopped or silent for over a week;
 * - slip PDFs older than `slipMonths` (default 84: 7 years, see docs/operations.md "Retention and counters");
 * - HR's month exports past their expiry (EXPORT_TTL_HOURS after they were built), with their
 *   file parts (the foreign key cascades), and failed ones older than a day.
 *
 * Queued, running and retrying jobs are never touched, whatever their age; the audit log and
 * salary transfers are kept. A pass stops when its time budget is used or its signal aborts
 * and says whether it finished (`done`), so the scheduled job can continue in another run.
 */
import type { Pool } from '@beton/db';

export interface RetentionPolicy {
  /** Finished jobs and attempts, delivery records, schedule and poll history. Default: 13. */
  jobsMonths: number;
  /** Slip PDFs. Default: 84 (7 years). */
  slipMonths: number;
  /** Rows per delete statement. Default: 5000. */
  batchSize: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { jobsMonths: 13, slipMonths: 84, batchSize: 5000 };

/** Worker rows (heartbeats) are kept this long after they stopped or went silent. */
export const WORKER_ROWS_KEPT_DAYS = 7;

interface Step {
  what: string;
  /** Deletes at most $2 rows older than $1 (a timestamp); returns the rows it deleted. */
  sql: string;
  cutoff: 'jobs' | 'slips' | 'workers' | 'now';
  /**
   * A walk by id instead (jobs: their creation time has a BRIN index, which finds the old pages
   * but gives no order): `upTo` ($1) gives the newest id created before the cutoff, once a pass;
   * `sql` deletes at most $2 old rows with ids in ($3, $4] and returns `n` and the `last` id it
   * deleted, where the next statement starts. Ids grow with creation, so the walk is from the
   * oldest, each row read once, and a pass with nothing old reads the BRIN summaries and the
   * block range still being filled (325,000 jobs: 84 buffers, 0.5 ms).
   */
  walk?: { upTo: string };
}

const STEPS: Step[] = [
  {
    what: 'jobs',
    cutoff: 'jobs',
    // `offset 0` keeps max() from becoming a backward walk of the primary key through every
    // newer job; the old ones are found through jobs_created_at_brin (or a scan when most are).
    walk: { upTo: `select max(id)::text as id from (select id from jobs where created_at < $1 offset 0) old` },
    sql: `with gone as (
            delete from jobs where id in (
              select id from jobs where id > $3 and id <= $4 and created_at < $1 and status in ('done', 'failed')
              order by id limit $2)
            returning id)
          select count(*)::int as n, max(id)::text as last from gone`,
  },
  {
    what: 'email_deliveries',
    cutoff: 'jobs',
    sql: `delete from email_deliveries where id in (
            select id from email_deliveries where created_at < $1 and status <> 'sending' order by created_at limit $2)`,
  },
  {
    what: 'month_exports',
    cutoff: 'now',
    sql: `delete from month_exports where id in (
            select id from month_exports where expires_at < $1 or (status = 'failed' and created_at < $1 - interval '1 day') limit $2)`,
  },
  { what: 'slips', cutoff: 'slips', sql: `delete from slips where id in (select id from slips where created_at < $1 order by created_at limit $2)` },
  {
    what: 'schedule_runs',
    cutoff: 'jobs',
    sql: `delete from schedule_runs where ctid = any(array(select ctid from schedule_runs where due_at < $1 limit $2))`,
  },
  {
    what: 'bank_polls',
    cutoff: 'jobs',
    sql: `delete from bank_polls where due_at in (
            select due_at from bank_polls where due_at < $1 and due_at < (select max(due_at) from bank_polls) order by due_at limit $2)`,
  },
  {
    what: 'workers',
    cutoff: 'workers',
    sql: `delete from workers where ctid = any(array(select ctid from workers where coalesce(stopped_at, last_seen) < $1 limit $2))`,
  },
];

export interface RetentionResult {
  /** Rows deleted per table (attempts go with their jobs). */
  deleted: Record<string, number>;
  /** Delete statements run. */
  batches: number;
  /** False when the time budget ran out or the signal aborted with rows still to delete. */
  done: boolean;
  ms: number;
}

const monthsBefore = (now: Date, months: number) => {
  const d = new Date(now);
  d.setUTCMonth(d.getUTCMonth() - months);
  return d;
};

/**
 * A step's deletes, one statement a call, each returning the rows it deleted; null when a walk
 * finds nothing created before the cutoff (its bound, read once a pass).
 */
async function batchesOf(pool: Pool, step: Step, cutoff: Date, size: number): Promise<(() => Promise<number>) | null> {
  if (!step.walk) return async () => (await pool.query(step.sql, [cutoff, size])).rowCount ?? 0;
  const upTo = (await pool.query<{ id: string | null }>(step.walk.upTo, [cutoff])).rows[0]!.id;
  if (upTo === null) return null;
  let after = '0';
  return async () => {
    const row = (await pool.query<{ n: number; last: string | null }>(step.sql, [cutoff, size, after, upTo])).rows[0]!;
    after = row.last ?? after;
    return row.n;
  };
}

export async function purgeHistory(
  pool: Pool,
  options: Partial<RetentionPolicy> & { now?: Date; budgetMs?: number; signal?: AbortSignal } = {},
): Promise<RetentionResult> {
  const policy = { ...DEFAULT_RETENTION, ...options };
  const now = options.now ?? new Date();
  const started = performance.now();
  const cutoffs = {
    jobs: monthsBefore(now, policy.jobsMonths),
    slips: monthsBefore(now, policy.slipMonths),
    workers: new Date(now.getTime() - WORKER_ROWS_KEPT_DAYS * 86_400_000),
    now,
  };
  const deleted: Record<string, number> = {};
  let batches = 0;
  const outOfTime = () => options.signal?.aborted || (options.budgetMs !== undefined && performance.now() - started > options.budgetMs);
  for (const step of STEPS) {
    deleted[step.what] = 0;
    const deleteBatch = await batchesOf(pool, step, cutoffs[step.cutoff], policy.batchSize);
    for (let count = policy.batchSize; deleteBatch && count === policy.batchSize;) {
      if (outOfTime()) return { deleted, batches, done: false, ms: Math.round(performance.now() - started) };
      count = await deleteBatch();
      batches++;
      deleted[step.what] = deleted[step.what]! + count;
    }
  }
  // Runs from before the completion trigger (migration one_slip_per_month) with nothing open:
  // completed here, in batches, not by a backfill inside the migration. "Nothing open" is the
  // completion trigger's own SQL function (migration 20261206050000_run_open_slip_jobs).
  await pool.query(
    `update payroll_runs r set status = 'completed', completed_at = coalesce(r.completed_at, now())
     where r.id in (
       select r2.id from payroll_runs r2
       where r2.status = 'running' and payroll_run_open_slip_jobs(r2.id) = 0
       limit $1)`,
    [policy.batchSize],
  );
  // Counters of runs and queues whose jobs are all gone.
  await pool.query(`delete from run_job_counts where n = 0`);
  await pool.query(`delete from queue_job_counts where n = 0`);
  return { deleted, batches, done: true, ms: Math.round(performance.now() - started) };
}
