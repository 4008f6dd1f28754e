-- Retention finds old delivery records by their creation time (CONCURRENTLY: see jobs_created_at_index).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "email_deliveries_created_at_idx" ON "email_deliveries"("created_at");
