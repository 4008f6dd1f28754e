-- "A run has nothing open" written once (it was in the completion trigger and again in the
-- retention pass that completes runs from before that trigger): the run's slip jobs (render and
-- email) that are queued, running or retrying, from the run_job_counts counters. STABLE: called
-- inside the trigger's UPDATE it reads with that statement's snapshot, taken after the run's
-- advisory lock, exactly as the subquery it replaces. The one jobs trigger of the next migration
-- (20261206100000) calls it; no table lock.
SET lock_timeout = '5s';
CREATE OR REPLACE FUNCTION "payroll_run_open_slip_jobs"(run uuid) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(c."n"), 0)::bigint FROM "run_job_counts" c
  WHERE c."payroll_run_id" = run AND c."task_name" IN ('render-slip', 'send-slip-email') AND c."status" IN ('queued', 'running', 'retrying')
$$;
