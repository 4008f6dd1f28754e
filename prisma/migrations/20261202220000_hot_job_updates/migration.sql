-- A job's status changes twice on its way (queued → running → done). With `status` (or
-- `finished_at`) in an index every such UPDATE wrote a new entry into all seven indexes of
-- `jobs`; with no changing column indexed and free room on the page, PostgreSQL updates the
-- row in place (a HOT update: no index entry at all). What the status indexes answered is
-- now answered elsewhere: counts per run by run_job_counts, running jobs by their open
-- attempt (job_attempts.finished_at is null), failed jobs by their error code (every failed
-- job has one), queue depth by a scan of the table (admin pages and the CLI).

-- DropIndex
DROP INDEX "jobs_payroll_run_id_task_name_status_finished_at_idx";
DROP INDEX "jobs_status_queue_idx";
DROP INDEX "jobs_company_id_status_idx";
DROP INDEX "jobs_status_last_error_code_idx";

-- CreateIndex
CREATE INDEX "jobs_company_id_idx" ON "jobs"("company_id");
CREATE INDEX "jobs_last_error_code_idx" ON "jobs"("last_error_code");

-- Room on each page for a new version of every row on it (HOT needs it on the same page; the
-- engine claims ~24 neighbouring jobs in one statement, so at 70 only ~65 % of them fitted).
ALTER TABLE "jobs" SET (fillfactor = 50);

-- The dead-letter queue is read through the error code's index: a failed job without one
-- would not be listed, so it cannot exist.
UPDATE "jobs" SET "last_error_code" = 'unknown' WHERE "status" = 'failed' AND "last_error_code" IS NULL;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_failed_has_error_code" CHECK ("status" <> 'failed' OR "last_error_code" IS NOT NULL);

-- An attempt carries its job's payroll run and task (copied when it is claimed), so HR's
-- "sent in the last minute" is one index range per run instead of a join to 50,000 jobs.
ALTER TABLE "job_attempts" ADD COLUMN "payroll_run_id" UUID, ADD COLUMN "task_name" TEXT;
UPDATE "job_attempts" a SET "payroll_run_id" = j."payroll_run_id", "task_name" = j."task_name" FROM "jobs" j WHERE j."id" = a."job_id";
CREATE INDEX "job_attempts_payroll_run_id_task_name_finished_at_idx" ON "job_attempts"("payroll_run_id", "task_name", "finished_at");
