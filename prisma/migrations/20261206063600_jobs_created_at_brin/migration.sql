-- Issue 23: retention finds old jobs through a BRIN index of their creation time instead of a
-- B-tree. Jobs are appended in creation order and never move (their updates are HOT), so one
-- summary per 128 pages says which pages can hold jobs older than the cutoff; a new job adds
-- no index entry (the B-tree took 6-11 % of the monthly fan-out's time per job, measured
-- paired per company). Built CONCURRENTLY, alone in its migration (see jobs_created_at_index);
-- autosummarize: autovacuum summarizes each range as it fills.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_created_at_brin" ON "jobs" USING BRIN ("created_at") WITH (autosummarize = on);
