-- See 20261206091801_wakeup_age_index_renamed: the engine's locked wake-ups index is jobs_wakeups_locked_at_idx.
DROP INDEX CONCURRENTLY IF EXISTS graphile_worker.beton_wakeups_locked_at_idx;
