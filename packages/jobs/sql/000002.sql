-- The job engine's schema, version 2: the trace context a job travels with (tracing.ts,
-- docs/tracing.md) — the W3C traceparent of the span it was enqueued in, and of its first failed
-- attempt (a retry's span links to it). Written only while a tracer is registered; never part of
-- the payload a handler sees. Nullable, no default: adding them rewrites nothing. Added only when
-- missing: a schema made before the engine owned it (Beton's Prisma migration
-- 20261206104600_jobs_traceparent) already has them.
SET LOCAL lock_timeout = '5s';
ALTER TABLE :JOBS_SCHEMA."jobs" ADD COLUMN IF NOT EXISTS "traceparent" TEXT;
ALTER TABLE :JOBS_SCHEMA."jobs" ADD COLUMN IF NOT EXISTS "first_attempt_traceparent" TEXT;
