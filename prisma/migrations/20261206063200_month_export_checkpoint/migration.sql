-- The payroll register is built in parts within a time budget (issue 22): where the last part
-- stopped (the next part's number, the last employee code written, the XLSX sheet's CRC and
-- sizes), committed with that part's bytes so a kill loses at most one batch.
SET lock_timeout = '5s';
ALTER TABLE "month_exports" ADD COLUMN "checkpoint" JSONB;
