-- Jobs per (queue, status), kept by the statement-level triggers that keep run_job_counts:
-- the queue depths (metrics, `jobs stats`, the admin's queues page) read these rows instead
-- of scanning every job ever run. A statement adds its net change per (queue, status) to the
-- stripe `pg_backend_pid() % 16`, so two workers' statements rarely wait on one counter row.
--
-- Safe on a large live database: a migration waits at most 5 s for a lock, then fails (and
-- is retried) instead of queueing every writer behind it. The existing jobs are counted once
-- while writes to `jobs` wait (SHARE lock; reads go on): the trigger counts every change from
-- the same moment, so no change is missed or counted twice. Measured by `npm run bench:history`
-- at 1.2 million jobs (README, "Database and migrations").
SET lock_timeout = '5s';

-- CreateTable
CREATE TABLE "queue_job_counts" (
    "queue" TEXT NOT NULL,
    "status" "JobStatus" NOT NULL,
    "slot" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL,

    CONSTRAINT "queue_job_counts_pkey" PRIMARY KEY ("queue","status","slot")
);

LOCK TABLE "jobs" IN SHARE MODE;

CREATE OR REPLACE FUNCTION "run_job_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  stripe smallint := pg_backend_pid() % 16;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", count(*) FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
    INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", sum(d) FROM (
      SELECT "payroll_run_id", "task_name", "status", 1 AS d FROM new_rows WHERE "payroll_run_id" IS NOT NULL
      UNION ALL
      SELECT "payroll_run_id", "task_name", "status", -1 FROM old_rows WHERE "payroll_run_id" IS NOT NULL
    ) x GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
    INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, sum(d) FROM (
      SELECT "queue", "status", 1 AS d FROM new_rows
      UNION ALL
      SELECT "queue", "status", -1 FROM old_rows
    ) x GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", -count(*) FROM old_rows
    WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
    INSERT INTO "queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, -count(*) FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSE -- TRUNCATE
    DELETE FROM "run_job_counts";
    DELETE FROM "queue_job_counts";
  END IF;
  RETURN NULL;
END $$;

-- The jobs already there (the trigger counts every change from here on).
INSERT INTO "queue_job_counts" ("queue", "status", "slot", "n")
SELECT "queue", "status", 0, count(*) FROM "jobs" GROUP BY 1, 2;
