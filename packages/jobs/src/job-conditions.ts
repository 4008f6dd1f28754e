import { currentWakeupMissingSql, strandedWakeupsFrom } from './wakeups.ts';

/**
 * SQL for the sets of jobs that a status index used to find. `jobs` has no index on its
 * status (migration hot_job_updates: its updates stay HOT), so each set is reached through a
 * column that does not change on a job's way to done.
 */

/**
 * Running jobs, through their open attempt (`job_attempts.finished_at is null`: an index
 * range as long as the jobs in flight). A FROM item: `j` is the job, `a` its running attempt.
 */
export const RUNNING_JOBS_FROM = `job_attempts a join jobs j on j.id = a.job_id and j.attempts = a.attempt and a.finished_at is null and j.status = 'running'`;

/**
 * Failed jobs (the DLQ), through their error code's index: every failed job has one (check
 * constraint jobs_failed_has_error_code). A condition on the `jobs` row called `table`.
 */
export function failedJobsWhere(table = 'jobs'): string {
  return `${table}.status = 'failed' and ${table}.last_error_code is not null`;
}

/**
 * The sweeper's stale threshold as the live schedulers recorded it (STALE_HEARTBEAT_MS), else
 * `defaultMs`: the dashboard judges "silent" and "stranded" by the sweeper's own measure.
 */
export function staleThresholdMsSql(defaultMs: number): string {
  return `coalesce((select stale_heartbeat_ms from workers where stale_heartbeat_ms is not null order by last_seen desc limit 1), ${Math.round(defaultMs)})`;
}

/** A job running longer than this is stuck (SPEC R8) unless the schedulers run with another STUCK_RUNNING_MS. */
export const DEFAULT_STUCK_RUNNING_MS = 10 * 60_000;

/**
 * The sweeper's "stuck after" as the live schedulers recorded it (STUCK_RUNNING_MS), else
 * `defaultMs`, in seconds: the HR run card and the admin's page call a job stuck by the
 * sweeper's own measure, never by a number of their own.
 */
export function stuckAfterSecondsSql(defaultMs = DEFAULT_STUCK_RUNNING_MS): string {
  return `(coalesce((select stuck_running_ms from workers where stuck_running_ms is not null order by last_seen desc limit 1), ${Math.round(defaultMs)}) / 1000.0)`;
}

/**
 * "Now" as the heartbeats see it: the freshest heartbeat of any running worker, or now() if
 * that is later. After the database was unreachable (refused connections, a restart) every
 * heartbeat is old, yet no worker is dead: measured from here, nothing looks stale until the
 * workers have had a heartbeat to catch up, while a worker that is really gone falls behind the
 * others (the sweeper's own process beats too).
 */
export const HEARTBEAT_NOW = `least(now(), coalesce((select max(last_seen) from workers where stopped_at is null), now()))`;

/** `ms` (SQL, milliseconds) before HEARTBEAT_NOW. */
export const heartbeatsAgo = (ms: string) => `${HEARTBEAT_NOW} - make_interval(secs => (${ms})::float8 / 1000)`;
const ago = heartbeatsAgo;

/**
 * A running job (`j`, from RUNNING_JOBS_FROM) nobody touches: its heartbeat (or its start)
 * is older than `thresholdMs` (SQL). The worker holding a job touches it every heartbeat
 * while the job runs and while its outcome is written, so this is a dead worker's job — or
 * one claimed by a statement whose answer never arrived.
 */
export function staleRunningCondition(thresholdMs: string): string {
  return `coalesce(j.heartbeat_at, j.started_at) < ${ago(thresholdMs)}`;
}

/**
 * Waiting jobs (`j`: queued or retrying, due more than `thresholdMs` (SQL) ago) whose current
 * wake-up (`w`) no worker will take: locked by a pool that has not touched it for that long (a
 * worker whose runner died, a fetch whose answer was lost), worn out by graphile-worker's own
 * retries, or pushed back by them past the job's due time by more than the threshold. A FROM
 * item read from the wake-up side: a job waiting in a long queue has a free wake-up and is not
 * in it, however long it waits, and the scan is over wake-ups (pending work), not all jobs.
 * Ends with its WHERE clause: a caller may add `and …`.
 */
export function strandedWaitingFrom(thresholdMs: string): string {
  return strandedWakeupsFrom(thresholdMs, ago(thresholdMs));
}

/**
 * Waiting jobs (`j`) due more than `thresholdMs` ago with no wake-up at all. Beton writes a job's
 * wake-up in the statement that makes it wait, so this should never match; the sweeper looks
 * anyway (a scan of the jobs waiting: not for the dashboard's pages).
 */
export function wakeupMissingCondition(thresholdMs: string): string {
  return `j.status in ('queued', 'retrying') and j.run_at < ${ago(thresholdMs)} and ${currentWakeupMissingSql('j')}`;
}

/** failedJobsWhere as a Prisma Client `where` on Job (the same set: the DLQ). */
export const FAILED_JOBS = { status: 'failed', lastErrorCode: { not: null } } as const;
