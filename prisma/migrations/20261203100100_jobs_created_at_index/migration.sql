-- Retention finds old jobs by their creation time. Built CONCURRENTLY (writes go on; it must
-- be the only statement of its migration: CONCURRENTLY cannot run in a transaction block).
-- If it fails it leaves an INVALID index: drop it, `prisma migrate resolve --rolled-back`, deploy again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_created_at_idx" ON "jobs"("created_at");
