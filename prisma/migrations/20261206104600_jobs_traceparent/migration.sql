-- The trace context a job travels with (docs/tracing.md): the W3C traceparent of the span it was
-- enqueued in, and of its first failed attempt (a retry's span links to it). Written only while
-- tracing is on; never part of the payload a handler sees. Nullable, no default: adding them
-- rewrites nothing. The engine adds the same columns when missing (packages/jobs/sql/000002.sql)
-- for a database it migrates alone.
SET lock_timeout = '5s';
ALTER TABLE "jobs" ADD COLUMN "traceparent" TEXT;
ALTER TABLE "jobs" ADD COLUMN "first_attempt_traceparent" TEXT;
