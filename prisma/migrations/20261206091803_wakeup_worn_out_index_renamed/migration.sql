-- See 20261206091801_wakeup_age_index_renamed: the engine's worn-out wake-ups index is jobs_wakeups_worn_out_idx.
DROP INDEX CONCURRENTLY IF EXISTS graphile_worker.beton_wakeups_worn_out_idx;
