-- An index of the resend-only-on-proof tables (20261206103000_email_certainty), built
-- CONCURRENTLY, alone in its migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "email_unknown_outcomes_open_idx" ON "email_unknown_outcomes" ("last_looked_up_at" NULLS FIRST, "recorded_at") WHERE "settled_at" IS NULL;
