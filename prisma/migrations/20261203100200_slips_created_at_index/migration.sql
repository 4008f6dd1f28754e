-- Retention finds old slip PDFs by their creation time (CONCURRENTLY: see jobs_created_at_index).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "slips_created_at_idx" ON "slips"("created_at");
