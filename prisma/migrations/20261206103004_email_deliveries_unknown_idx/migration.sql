-- An index of the resend-only-on-proof tables (20261206103000_email_certainty), built
-- CONCURRENTLY, alone in its migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "email_deliveries_unknown_idx" ON "email_deliveries" ("outcome_unknown_since") WHERE "outcome_unknown_since" IS NOT NULL;
