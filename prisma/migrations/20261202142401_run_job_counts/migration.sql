-- CreateTable
CREATE TABLE "run_job_counts" (
    "payroll_run_id" UUID NOT NULL,
    "task_name" TEXT NOT NULL,
    "status" "JobStatus" NOT NULL,
    "n" INTEGER NOT NULL,

    CONSTRAINT "run_job_counts_pkey" PRIMARY KEY ("payroll_run_id","task_name","status")
);

-- Kept by statement-level triggers: every statement that inserts, updates or deletes jobs
-- adds its net change per (run, task, status), in key order, so two single-statement writers
-- lock the same counter rows in the same order. Jobs without a payroll run are not counted.
CREATE FUNCTION "run_job_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", count(*) FROM new_rows
    WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", sum(d) FROM (
      SELECT "payroll_run_id", "task_name", "status", 1 AS d FROM new_rows WHERE "payroll_run_id" IS NOT NULL
      UNION ALL
      SELECT "payroll_run_id", "task_name", "status", -1 FROM old_rows WHERE "payroll_run_id" IS NOT NULL
    ) x GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "run_job_counts" AS c ("payroll_run_id", "task_name", "status", "n")
    SELECT "payroll_run_id", "task_name", "status", -count(*) FROM old_rows
    WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("payroll_run_id", "task_name", "status") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSE -- TRUNCATE
    DELETE FROM "run_job_counts";
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "jobs_count_insert" AFTER INSERT ON "jobs" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "run_job_counts_apply"();
CREATE TRIGGER "jobs_count_update" AFTER UPDATE ON "jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "run_job_counts_apply"();
CREATE TRIGGER "jobs_count_delete" AFTER DELETE ON "jobs" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "run_job_counts_apply"();
CREATE TRIGGER "jobs_count_truncate" AFTER TRUNCATE ON "jobs"
  FOR EACH STATEMENT EXECUTE FUNCTION "run_job_counts_apply"();

-- The jobs already there.
INSERT INTO "run_job_counts" ("payroll_run_id", "task_name", "status", "n")
SELECT "payroll_run_id", "task_name", "status", count(*) FROM "jobs"
WHERE "payroll_run_id" IS NOT NULL GROUP BY 1, 2, 3;
