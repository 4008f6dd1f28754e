-- A scheduler's built-in schedules as it runs them ({"sweep-stuck-jobs": "*/5 * * * *", ...}):
-- SWEEP_CRON and BANK_POLL_CRON override the definitions' crons per worker, and the admin's
-- Schedules page shows what the live schedulers actually run.
ALTER TABLE "workers" ADD COLUMN "schedules" JSONB;
