-- A scheduler's STUCK_RUNNING_MS: its sweeper puts back a job running longer than this, and the
-- HR run card and the admin's stuck-jobs page call a job stuck by the same measure (one setting).
SET lock_timeout = '5s';
ALTER TABLE "workers" ADD COLUMN "stuck_running_ms" INTEGER;
