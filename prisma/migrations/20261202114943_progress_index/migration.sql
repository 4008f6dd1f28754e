-- DropIndex
DROP INDEX "jobs_payroll_run_id_status_idx";

-- CreateIndex
CREATE INDEX "jobs_payroll_run_id_task_name_status_finished_at_idx" ON "jobs"("payroll_run_id", "task_name", "status", "finished_at");
