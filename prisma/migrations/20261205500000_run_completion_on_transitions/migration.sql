-- Issue 23: a payroll run's completion is looked at only when one of its slip jobs went from
-- open (queued, running, retrying) to closed or back. A claim (queued → running), a heartbeat
-- or a retry's bookkeeping leaves the run's open count as it was, so it cannot complete or
-- reopen the run: those statements no longer take the run's lock and update payroll_runs
-- (4.9 of them per slip in the bench before, every one of the engine's batched claims included).
-- INSERT and DELETE are unchanged (a new job can reopen a completed run). No table lock: the
-- function is replaced, the triggers stay.
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
  FROM (
    SELECT t.id, coalesce(sum(c."n") FILTER (WHERE c."status" IN ('queued', 'running', 'retrying')), 0) AS n
    FROM unnest(runs) AS t(id)
    LEFT JOIN "run_job_counts" c ON c."payroll_run_id" = t.id AND c."task_name" IN ('render-slip', 'send-slip-email')
    GROUP BY t.id
  ) o
  WHERE r."id" = o.id AND r."status" <> 'enqueuing' AND (r."status" = 'completed') <> (o.n = 0);
  RETURN NULL;
END $$;
