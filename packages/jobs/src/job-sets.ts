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
