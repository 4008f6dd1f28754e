-- An index of the resend-only-on-proof tables (20261206103000_email_certainty), built
-- CONCURRENTLY, alone in its migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "email_deliveries_batch_id_idx" ON "email_deliveries" ("batch_id") WHERE "batch_id" IS NOT NULL;
