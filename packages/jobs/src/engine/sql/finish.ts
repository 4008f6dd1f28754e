import { ASYNC_COMMIT, type PoolClient, type Pool } from '../../db.ts';
import type { ErrorKind } from '../../errors.ts';
import { transitionSql, type JobStatus } from '../../transitions.ts';
import type { AttemptOutcome } from '../types.ts';

// The edges these statements take (transitions.ts: checked against the machine at load).
const DONE_FROM = transitionSql('mark done', ['running'], 'done');

/** An outcome's new status (writeOutcome): each from running. */
export const OUTCOME_STATUS = {
  paused: 'queued',
  deferred: 'retrying',
  retrying: 'retrying',
  superseded: 'superseded',
  next_run: 'done',
  failed: 'failed',
} as const satisfies Record<string, JobStatus>;
const OUTCOME_FROM = new Set(Object.values(OUTCOME_STATUS).map((to) => transitionSql(`outcome → ${to}`, ['running'], to)));
if (OUTCOME_FROM.size !== 1) throw new Error('every outcome moves a running job');
const [OUTCOME_FROM_SQL] = OUTCOME_FROM;

const MARK_DONE = {
  // Fixed text: a named prepared statement, planned once per connection (not per batch).
  name: 'jobs_mark_done',
  text: `with d as (select * from unnest($1::bigint[], $2::int[], $3::bigint[], $4::int[]) as d(id, attempt, attempt_id, duration_ms))
       , locked as (select jobs.id from jobs join d on d.id = jobs.id order by jobs.id for update of jobs)
       , j as (update jobs set status = 'done', finished_at = now(), worker_id = null, updated_at = now()
               from d, ${ASYNC_COMMIT} where jobs.id = d.id and jobs.id in (select id from locked) and jobs.status in ${DONE_FROM} and jobs.attempts = d.attempt returning jobs.id)
       update job_attempts a set outcome = 'done', finished_at = now(), duration_ms = d.duration_ms
       from d join j on j.id = d.id where a.id = d.attempt_id`,
};

export interface DoneItem {
  jobId: number;
  attempt: number;
  attemptId: number;
  durationMs: number;
}

/**
 * Successful finishes (running → done and the attempt's row) of many jobs in one statement.
 * Guarded by each job's attempt: run again after a database fault, it changes nothing twice.
 * Committed asynchronously (db.ts ASYNC_COMMIT): a finish lost in a server crash is a job
 * run again, which finds its work done (the slip stored under its key, the email sent or its
 * outcome unknown: the unknown mark before a request is a synchronous commit, email.ts).
 */
export async function markJobsDone(pool: Pool, items: readonly DoneItem[]): Promise<void> {
  await pool.query({
    ...MARK_DONE,
    values: [items.map((i) => i.jobId), items.map((i) => i.attempt), items.map((i) => i.attemptId), items.map((i) => Math.round(i.durationMs))],
  });
}

const OUTCOME_JOB = {
  text: `update jobs set status = $3::"JobStatus", last_error = $4, last_error_kind = $5::"ErrorKind", last_error_code = $6,
                run_at = case when $7::int is null then run_at else now() + make_interval(secs => $7::float8 / 1000) end,
                wakeup_seq = wakeup_seq + case when $7::int is null then 0 else 1 end,
                finished_at = case when $7::int is null then now() else null end,
                attempts = attempts - case when $8 then 1 else 0 end,
                superseded_by = coalesce($9, superseded_by),
                first_attempt_traceparent = coalesce(first_attempt_traceparent, $10),
                worker_id = null, updated_at = now()
         where id = $1 and status in ${OUTCOME_FROM_SQL} and attempts = $2
         returning wakeup_seq, run_at`,
};

const OUTCOME_ATTEMPT = {
  text: `update job_attempts set outcome = $2::"AttemptOutcome", finished_at = now(), duration_ms = $3, error_kind = $4::"ErrorKind",
                error_code = $5, error_message = $6, error_stack = $7, retry_delay_ms = $8 where id = $1`,
};

export interface FailureRow {
  jobId: number;
  attempt: number;
  attemptId: number;
  status: JobStatus;
  attemptOutcome: AttemptOutcome;
  durationMs: number;
  message: string;
  errorKind: ErrorKind;
  errorCode: string;
  errorStack: string | null;
  /** Runs again after this many ms (a new wake-up); null: the job is final. */
  delayMs: number | null;
  /** The attempt is not counted (a pause, a deferral). */
  free: boolean;
  supersededBy: string | null;
  /** The attempt's span (tracing.ts), kept as the first failed attempt's for its retries' link; null when not traced. */
  attemptTraceparent: string | null;
}

/**
 * An attempt that did not succeed, in `client`'s transaction: the job's new status (guarded by
 * its attempt, so a second run changes nothing) and the attempt's history row. Returns the job's
 * new wake-up number and run time when it changed (its wake-up is the caller's).
 */
export async function writeFailure(client: PoolClient, f: FailureRow): Promise<{ wakeup_seq: number; run_at: Date } | undefined> {
  const { rows } = await client.query<{ wakeup_seq: number; run_at: Date }>({
    ...OUTCOME_JOB,
    values: [f.jobId, f.attempt, f.status, f.message, f.errorKind, f.errorCode, f.delayMs, f.free, f.supersededBy, f.attemptTraceparent],
  });
  await client.query({
    ...OUTCOME_ATTEMPT,
    values: [f.attemptId, f.attemptOutcome, Math.round(f.durationMs), f.errorKind, f.errorCode, f.message, f.errorStack, f.delayMs],
  });
  return rows[0];
}
