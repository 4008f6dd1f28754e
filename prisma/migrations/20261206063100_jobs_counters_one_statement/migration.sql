-- Issue 23: one trigger per statement on `jobs`, and one statement inside it in the common case.
-- The counters (run_job_counts, queue_job_counts) and the run-completion check were two
-- statement-level triggers per event, four to eight statements inside them per statement on
-- `jobs`: the two counters' upserts, the completion's run list, a loop of advisory locks and
-- the payroll_runs update. Now one function per statement: both counters' net changes and the
-- list of runs whose open count may have changed are one statement (writable CTEs over the
-- transition tables, aggregated per statement: a batched claim or finish of 20 jobs changes
-- each counter row once); only when that list is not empty, the runs' locks (one statement, in
-- id order) and the completion update follow — after the counters, as before (a data-modifying
-- CTE's changes are not visible inside its own statement, so the update is a statement of its
-- own). What is counted and when a run completes are unchanged (run-completion.test.ts).
-- TRUNCATE keeps its trigger. No data changed; the triggers are swapped under `jobs`'s
-- trigger lock (SHARE ROW EXCLUSIVE, brief), so lock_timeout first.
SET lock_timeout = '5s';

CREATE FUNCTION "jobs_after_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  stripe smallint := pg_backend_pid() % 16;
  runs uuid[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    WITH rc AS (
      INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
      SELECT "payroll_run_id", "task_name", "status", count(*) FROM new_rows
      WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n"
    ), qc AS (
      INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
      SELECT "queue", "status", stripe, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n"
    )
    SELECT array_agg(DISTINCT "payroll_run_id" ORDER BY "payroll_run_id") INTO runs FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      SELECT "payroll_run_id", "task_name", "queue", "status", 1 AS d FROM new_rows
      UNION ALL
      SELECT "payroll_run_id", "task_name", "queue", "status", -1 FROM old_rows
    ), rc AS (
      INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
      SELECT "payroll_run_id", "task_name", "status", sum(d) FROM d WHERE "payroll_run_id" IS NOT NULL
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n"
    ), qc AS (
      INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
      SELECT "queue", "status", stripe, sum(d) FROM d GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
      ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n"
    )
    -- Only runs where a job went from open (queued, running, retrying) to closed or back, or
    -- moved between runs: a claim (queued → running) or a heartbeat cannot complete or reopen one.
    SELECT array_agg(DISTINCT r ORDER BY r) INTO runs FROM (
      SELECT unnest(ARRAY[n."payroll_run_id", o."payroll_run_id"]) AS r
      FROM new_rows n JOIN old_rows o ON o."id" = n."id"
      WHERE n."task_name" IN ('render-slip', 'send-slip-email')
        AND ((n."status" IN ('queued', 'running', 'retrying')) <> (o."status" IN ('queued', 'running', 'retrying'))
             OR n."payroll_run_id" IS DISTINCT FROM o."payroll_run_id")
    ) x WHERE r IS NOT NULL;
  ELSE -- DELETE
    WITH rc AS (
      INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
      SELECT "payroll_run_id", "task_name", "status", -count(*) FROM old_rows
      WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n"
    ), qc AS (
      INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
      SELECT "queue", "status", stripe, -count(*) FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n"
    )
    SELECT array_agg(DISTINCT "payroll_run_id" ORDER BY "payroll_run_id") INTO runs FROM old_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  END IF;
  IF runs IS NULL THEN RETURN NULL; END IF;
  -- One statement per run at a time, the locks taken in id order (no deadlock between runs):
  -- two statements finishing a run's last two jobs at once would each still see the other's
  -- job open in its snapshot, and neither would complete the run. The second waits here until
  -- the first commits, and its next query sees the first's counts.
  PERFORM pg_advisory_xact_lock(hashtext('payroll-run-completion:' || t.id::text)) FROM unnest(runs) WITH ORDINALITY AS t(id, i) ORDER BY t.i;
  UPDATE "payroll_runs" r
  SET "status" = CASE WHEN o.n = 0 THEN 'completed' ELSE 'running' END::"PayrollRunStatus",
      "completed_at" = CASE WHEN o.n = 0 THEN now() ELSE r."completed_at" END
  -- "Nothing open" is payroll_run_open_slip_jobs (migration 20261206050000), as in the retention pass.
  FROM (SELECT t.id, "payroll_run_open_slip_jobs"(t.id) AS n FROM unnest(runs) AS t(id)) o
  WHERE r."id" = o.id AND r."status" <> 'enqueuing' AND (r."status" = 'completed') <> (o.n = 0);
  RETURN NULL;
END $$;

DROP TRIGGER "jobs_count_insert" ON "jobs";
DROP TRIGGER "jobs_count_update" ON "jobs";
DROP TRIGGER "jobs_count_delete" ON "jobs";
DROP TRIGGER "jobs_run_completion_insert" ON "jobs";
DROP TRIGGER "jobs_run_completion_update" ON "jobs";
DROP TRIGGER "jobs_run_completion_delete" ON "jobs";

CREATE TRIGGER "jobs_changed_insert" AFTER INSERT ON "jobs" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "jobs_after_change"();
CREATE TRIGGER "jobs_changed_update" AFTER UPDATE ON "jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "jobs_after_change"();
CREATE TRIGGER "jobs_changed_delete" AFTER DELETE ON "jobs" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "jobs_after_change"();

DROP FUNCTION "payroll_runs_track_completion"();
