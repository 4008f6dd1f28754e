-- The job engine's indexes on graphile-worker's wake-up table carry the engine's names now
-- (jobs_wakeups_*, built by the engine's migrate step right after Prisma's migrations): the old
-- name goes. IF EXISTS: a new database has neither the index nor graphile-worker's schema yet.
DROP INDEX CONCURRENTLY IF EXISTS graphile_worker.beton_wakeups_task_run_at_idx;
