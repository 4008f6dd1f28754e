-- A scheduler's STALE_HEARTBEAT_MS: its sweeper puts back the jobs of a worker whose heartbeat is
-- older than this, and the admin's Workers page calls such a worker "silent" by the same measure.
ALTER TABLE "workers" ADD COLUMN "stale_heartbeat_ms" INTEGER;
