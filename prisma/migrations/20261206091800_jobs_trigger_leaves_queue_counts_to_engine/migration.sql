-- The job engine owns its schema now (@beton/jobs migrate, packages/jobs/sql/): its queue
-- counters (queue_job_counts) are kept by its own trigger on `jobs`, installed by its first
-- migration right after this one (Beton's migrate step runs Prisma's migrations, then the
-- engine's), which also counts them again from `jobs`. Beton's trigger on `jobs` keeps what is
-- Beton's: the payroll runs' counters (run_job_counts) and their completion. Functions
-- replaced, triggers unchanged: no table lock.
CREATE OR REPLACE FUNCTION "jobs_after_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  runs uuid[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    WITH rc AS (
      INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
      SELECT "payroll_run_id", "task_name", "status", count(*) FROM new_rows
      WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n"
    )
    SELECT array_agg(DISTINCT "payroll_run_id" ORDER BY "payroll_run_id") INTO runs FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL AND "task_name" IN ('render-slip', 'send-slip-email');
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      SELECT "payroll_run_id", "task_name", "status", 1 AS d FROM new_rows WHERE "payroll_run_id" IS NOT NULL
      UNION ALL
      SELECT "payroll_run_id", "task_name", "status", -1 FROM old_rows WHERE "payroll_run_id" IS NOT NULL
    ), rc AS (
      INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
      SELECT "payroll_run_id", "task_name", "status", sum(d) FROM d
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n"
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
  FROM (SELECT t.id, "payroll_run_open_slip_jobs"(t.id) AS n FROM unnest(runs) AS t(id)) o
  WHERE r."id" = o.id AND r."status" <> 'enqueuing' AND (r."status" = 'completed') <> (o.n = 0);
  RETURN NULL;
END $$;

-- `jobs_count_truncate` runs this on TRUNCATE only (the other events are jobs_after_change's):
-- the payroll runs' counters go with the jobs; the engine's trigger empties its own.
CREATE OR REPLACE FUNCTION "run_job_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "run_job_counts";
  RETURN NULL;
END $$;
