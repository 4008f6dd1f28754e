-- An index of the resend-only-on-proof tables (20261206103000_email_certainty), built
-- CONCURRENTLY, alone in its migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "email_batches_open_idx" ON "email_batches" ("send_at") WHERE "state" = 'open';
