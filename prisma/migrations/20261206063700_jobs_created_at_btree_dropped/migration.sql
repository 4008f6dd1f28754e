-- The B-tree retention used before jobs_created_at_brin (the migration before this one); alone,
-- as CONCURRENTLY must be.
DROP INDEX CONCURRENTLY IF EXISTS "jobs_created_at_idx";
