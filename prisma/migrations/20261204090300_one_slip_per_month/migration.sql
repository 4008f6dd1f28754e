-- R13: one slip per employee and month on every path; HR's actions ahead of the bulk night;
-- every company's share of the night; a run that completes.

-- graphile-worker's order of each job's wake-ups (lower first): the bulk spreads over 0–999 by
-- each company's share, HR's one-off actions run at -1000. Not indexed: it changes only when
-- HR moves a queued slip ahead, so a job's way to done stays a HOT update.
SET lock_timeout = '5s';

ALTER TABLE "jobs" ADD COLUMN "priority" INTEGER NOT NULL DEFAULT 0,
                   ADD COLUMN "superseded_by" TEXT;

-- "Send another copy": a deliberate second email, numbered with the resends.
ALTER TABLE "slip_resends" ADD COLUMN "copy" BOOLEAN NOT NULL DEFAULT false;

-- A payroll run is completed when none of its slips is open: no render or email job of it
-- queued, running or retrying (resends of its month belong to it; extra copies do not). Kept
-- from the counters of run_job_counts after every statement on `jobs` that touches a run's slip
-- jobs (the jobs_count_* triggers run first: triggers of one event fire in name order), both
-- ways: a resend or an admin's retry opens the run again, and it completes again when that
-- slip is done. A run still enqueuing (its fan-out's transaction) is left alone.
CREATE FUNCTION "payroll_runs_track_completion"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  runs uuid[];
  run uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(DISTINCT "payroll_run_id") INTO runs FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(DISTINCT "payroll_run_id") INTO runs FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
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

CREATE TRIGGER "jobs_run_completion_insert" AFTER INSERT ON "jobs" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "payroll_runs_track_completion"();
CREATE TRIGGER "jobs_run_completion_update" AFTER UPDATE ON "jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "payroll_runs_track_completion"();
CREATE TRIGGER "jobs_run_completion_delete" AFTER DELETE ON "jobs" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "payroll_runs_track_completion"();

-- The runs already there are completed by the daily retention pass (purgeHistory), in
-- batches: no backfill inside a migration.
