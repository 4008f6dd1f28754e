-- "A run has nothing open" written once (it was in the completion trigger and again in the
-- retention pass that completes runs from before that trigger): the run's slip jobs (render and
-- email) that are queued, running or retrying, from the run_job_counts counters. STABLE: called
-- inside the trigger's UPDATE it reads with that statement's snapshot, taken after the run's
-- advisory lock, exactly as the subquery it replaces. The trigger function is replaced, its
-- triggers stay; no table lock.
SET lock_timeout = '5s';
CREATE OR REPLACE FUNCTION "payroll_run_open_slip_jobs"(run uuid) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(c."n"), 0)::bigint FROM "run_job_counts" c
  WHERE c."payroll_run_id" = run AND c."task_name" IN ('render-slip', 'send-slip-email') AND c."status" IN ('queued', 'running', 'retrying')
$$;

-- The completion trigger of 20261205500000, its open count from the function (migration
-- 20261206100000 then folds it into the one jobs trigger, which calls the function too).
CREATE OR REPLACE FUNCTION "payroll_runs_track_completion"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  runs uuid[];
  run uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(DISTINCT "payroll_run_id") INTO runs FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(DISTINCT n."payroll_run_id") INTO runs FROM new_rows n JOIN old_rows o ON o."id" = n."id"
    WHERE n."payroll_run_id" IS NOT NULL AND n."task_name" IN ('render-slip', 'send-slip-email')
      AND ((n."status" IN ('queued', 'running', 'retrying')) <> (o."status" IN ('queued', 'running', 'retrying'))
           OR n."payroll_run_id" IS DISTINCT FROM o."payroll_run_id");
  ELSE
    SELECT array_agg(DISTINCT "payroll_run_id") INTO runs FROM old_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  END IF;
  IF runs IS NULL THEN RETURN NULL; END IF;
  -- One statement per run at a time, in id order (no deadlock between runs): two statements
  -- finishing a run's last two jobs at once would each still see the other's job open in its
  -- snapshot, and neither would complete the run. The second waits here until the first
  -- commits, and its next query sees the first's counts.
  FOR run IN SELECT t.id FROM unnest(runs) AS t(id) ORDER BY t.id LOOP
    PERFORM pg_advisory_xact_lock(hashtext('payroll-run-completion:' || run::text));
  END LOOP;
  UPDATE "payroll_runs" r
  SET "status" = CASE WHEN o.n = 0 THEN 'completed' ELSE 'running' END::"PayrollRunStatus",
      "completed_at" = CASE WHEN o.n = 0 THEN now() ELSE r."completed_at" END
  FROM (SELECT t.id, "payroll_run_open_slip_jobs"(t.id) AS n FROM unnest(runs) AS t(id)) o
  WHERE r."id" = o.id AND r."status" <> 'enqueuing' AND (r."status" = 'completed') <> (o.n = 0);
  RETURN NULL;
END $$;
