-- The job engine's schema, version 1: its types, tables, queue counters and functions, in the
-- schema the application names (:JOBS_SCHEMA, substituted by migrate.ts as a quoted identifier).
--
-- It adopts a schema an earlier release left (Beton's, created by its Prisma migrations before
-- the engine owned its schema): every type, table and index is created only when missing,
-- functions and triggers are replaced, and the queue counters are counted again from `jobs`.
-- An application's own columns, indexes and triggers on these tables (its job links, its
-- counters) are left alone: docs/engine.md, "Schema and extension points".
--
-- Runs in one transaction (migrate.ts). `jobs` is locked against writes (SHARE ROW EXCLUSIVE;
-- reads go on) from the recount to the commit, so no change is missed or counted twice; a
-- migration waits at most 5 s for that lock, then fails and is run again.
SET LOCAL lock_timeout = '5s';

DO $$
BEGIN
  IF to_regtype(':JOBS_SCHEMA."JobStatus"') IS NULL THEN
    CREATE TYPE :JOBS_SCHEMA."JobStatus" AS ENUM ('queued', 'running', 'retrying', 'done', 'failed', 'superseded');
  END IF;
  IF to_regtype(':JOBS_SCHEMA."ErrorKind"') IS NULL THEN
    CREATE TYPE :JOBS_SCHEMA."ErrorKind" AS ENUM ('transient', 'permanent');
  END IF;
  IF to_regtype(':JOBS_SCHEMA."AttemptOutcome"') IS NULL THEN
    CREATE TYPE :JOBS_SCHEMA."AttemptOutcome" AS ENUM ('running', 'done', 'retrying', 'failed', 'handed_back', 'recovered', 'superseded');
  END IF;
END $$;

-- One row per job, its status moving along transitions.ts. No index holds a column that changes
-- on a job's way to done (status, attempts, worker, times): its updates are HOT (in place, no
-- index writes; fillfactor 50 leaves them room). Running jobs are found by their open attempt,
-- failed ones by their error code.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."jobs" (
  "id" BIGSERIAL PRIMARY KEY,
  "task_name" TEXT NOT NULL,
  "queue" TEXT NOT NULL,
  "payload" JSONB NOT NULL,
  "status" :JOBS_SCHEMA."JobStatus" NOT NULL DEFAULT 'queued',
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "max_attempts" INTEGER NOT NULL,
  "run_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "idempotency_key" TEXT NOT NULL,
  -- Number of the current graphile-worker wake-up; one carrying another number is stale.
  "wakeup_seq" INTEGER NOT NULL DEFAULT 0,
  -- graphile-worker's order (lower first), copied onto every wake-up (lanes.ts).
  "priority" INTEGER NOT NULL DEFAULT 0,
  -- Status superseded: what made this job unnecessary.
  "superseded_by" TEXT,
  "worker_id" TEXT,
  "started_at" TIMESTAMPTZ(3),
  "heartbeat_at" TIMESTAMPTZ(3),
  "finished_at" TIMESTAMPTZ(3),
  "last_error" TEXT,
  "last_error_kind" :JOBS_SCHEMA."ErrorKind",
  "last_error_code" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "jobs_failed_has_error_code" CHECK ("status" <> 'failed' OR "last_error_code" IS NOT NULL)
) WITH (fillfactor = 50);
CREATE UNIQUE INDEX IF NOT EXISTS "jobs_idempotency_key_key" ON :JOBS_SCHEMA."jobs" ("idempotency_key");
CREATE INDEX IF NOT EXISTS "jobs_last_error_code_idx" ON :JOBS_SCHEMA."jobs" ("last_error_code");
-- Retention finds old jobs by creation time, which never changes: a BRIN index (jobs are appended
-- in creation order), so a new job writes no index entry.
CREATE INDEX IF NOT EXISTS "jobs_created_at_brin" ON :JOBS_SCHEMA."jobs" USING brin ("created_at") WITH (autosummarize = on);

-- One row per attempt at a job: who ran it, how it ended, its error.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."job_attempts" (
  "id" BIGSERIAL PRIMARY KEY,
  "job_id" BIGINT NOT NULL REFERENCES :JOBS_SCHEMA."jobs" ("id") ON UPDATE CASCADE ON DELETE CASCADE,
  "attempt" INTEGER NOT NULL,
  "task_name" TEXT,
  "worker_id" TEXT,
  "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "finished_at" TIMESTAMPTZ(3),
  "duration_ms" INTEGER,
  "outcome" :JOBS_SCHEMA."AttemptOutcome" NOT NULL DEFAULT 'running',
  "error_kind" :JOBS_SCHEMA."ErrorKind",
  "error_code" TEXT,
  "error_message" TEXT,
  "error_stack" TEXT,
  "retry_delay_ms" INTEGER
);
CREATE INDEX IF NOT EXISTS "job_attempts_job_id_attempt_idx" ON :JOBS_SCHEMA."job_attempts" ("job_id", "attempt");
CREATE INDEX IF NOT EXISTS "job_attempts_finished_at_idx" ON :JOBS_SCHEMA."job_attempts" ("finished_at");

-- Jobs per (queue, status): queue depths read a few dozen rows instead of every job ever run.
-- Each statement adds its net change to the stripe `slot` = its backend's pid mod 16, so
-- concurrent workers rarely wait on one counter row; readers sum the stripes.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."queue_job_counts" (
  "queue" TEXT NOT NULL,
  "status" :JOBS_SCHEMA."JobStatus" NOT NULL,
  "slot" SMALLINT NOT NULL,
  "n" BIGINT NOT NULL,
  CONSTRAINT "queue_job_counts_pkey" PRIMARY KEY ("queue", "status", "slot")
);

-- A queue paused for an account fault: while the row exists no worker claims the queue's jobs.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."queue_pauses" (
  "queue" TEXT PRIMARY KEY,
  "reason" TEXT NOT NULL,
  "error_code" TEXT NOT NULL,
  "paused_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "paused_by" TEXT NOT NULL
);

-- Worker processes and their heartbeats: the sweeper recovers the jobs of workers gone silent.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."workers" (
  "id" TEXT PRIMARY KEY,
  "host" TEXT NOT NULL,
  "pid" INTEGER NOT NULL,
  "queue" TEXT NOT NULL,
  "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "last_seen" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "stopped_at" TIMESTAMPTZ(3),
  "graphile_pool_id" TEXT,
  "schedules" JSONB,
  "stale_heartbeat_ms" INTEGER,
  "stalled_since" TIMESTAMPTZ(3),
  "stall_reason" TEXT,
  "runner_deaths" INTEGER NOT NULL DEFAULT 0,
  "stuck_running_ms" INTEGER
);

-- Lease locks: taken only if absent or expired.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."locks" (
  "key" TEXT PRIMARY KEY,
  "owner" TEXT NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL
);

-- Time-zone aware schedules: each due time enqueued once.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."schedule_runs" (
  "schedule_id" TEXT NOT NULL,
  "due_at" TIMESTAMPTZ(3) NOT NULL,
  "enqueued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "enqueued_by" TEXT NOT NULL,
  CONSTRAINT "schedule_runs_pkey" PRIMARY KEY ("schedule_id", "due_at")
);

-- Global concurrency limits in PostgreSQL: one row per slot, leased.
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."limiter_slots" (
  "key" TEXT NOT NULL,
  "slot" INTEGER NOT NULL,
  "holder" TEXT,
  "expires_at" TIMESTAMPTZ(3),
  CONSTRAINT "limiter_slots_pkey" PRIMARY KEY ("key", "slot")
);

-- Global rate limits in PostgreSQL (GCRA): the theoretical arrival time of the next start, in
-- microseconds (whole milliseconds would round a 25.75-ms spacing to 26).
CREATE TABLE IF NOT EXISTS :JOBS_SCHEMA."rate_limits" (
  "key" TEXT PRIMARY KEY,
  "tat" TIMESTAMPTZ(6) NOT NULL
);

-- A rate limit counted per clock second ('fixed' window): the first free place at or after `us`
-- (epoch microseconds), each second having `per_second` places `lead_us + i × spacing_us` µs
-- into it. Mirrors nextPlaceInSecond (limits/places.ts) and the Redis store's script.
CREATE OR REPLACE FUNCTION :JOBS_SCHEMA."jobs_rate_next_place"(us bigint, per_second int, lead_us bigint, spacing_us bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN i < per_second THEN second * 1000000 + lead_us + i * spacing_us ELSE (second + 1) * 1000000 + lead_us END
  FROM (SELECT second, CASE WHEN into_us <= lead_us THEN 0 ELSE (into_us - lead_us + spacing_us - 1) / spacing_us END AS i
        FROM (SELECT floor(us / 1000000.0)::bigint AS second, us - floor(us / 1000000.0)::bigint * 1000000 AS into_us) a) b
$$;

-- graphile-worker's id of a task, its row created when missing: the one part of its add_jobs the
-- engine's own wake-up insert needs (wakeups.ts). VOLATILE plpgsql: each statement takes a new
-- snapshot, so a row another transaction committed while this insert waited for it is found.
CREATE OR REPLACE FUNCTION :JOBS_SCHEMA."jobs_wakeup_task_id"(task_identifier text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_id integer;
BEGIN
  SELECT t.id INTO found_id FROM graphile_worker._private_tasks t WHERE t.identifier = task_identifier;
  IF found_id IS NULL THEN
    INSERT INTO graphile_worker._private_tasks (identifier) VALUES (task_identifier) ON CONFLICT DO NOTHING;
    SELECT t.id INTO found_id FROM graphile_worker._private_tasks t WHERE t.identifier = task_identifier;
  END IF;
  RETURN found_id;
END
$$;

-- The queue counters' trigger: one statement per statement on `jobs` (from its transition
-- tables, aggregated: a batched claim of 20 jobs changes each counter row once).
CREATE OR REPLACE FUNCTION :JOBS_SCHEMA."jobs_count_queues"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  stripe smallint := pg_backend_pid() % 16;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO :JOBS_SCHEMA."queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO :JOBS_SCHEMA."queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, sum(d) FROM (
      SELECT "queue", "status", 1 AS d FROM new_rows
      UNION ALL
      SELECT "queue", "status", -1 FROM old_rows
    ) x GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO :JOBS_SCHEMA."queue_job_counts" AS c ("queue", "status", "slot", "n")
    SELECT "queue", "status", stripe, -count(*) FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("queue", "status", "slot") DO UPDATE SET "n" = c."n" + excluded."n";
  ELSE -- TRUNCATE
    DELETE FROM :JOBS_SCHEMA."queue_job_counts";
  END IF;
  RETURN NULL;
END $$;

LOCK TABLE :JOBS_SCHEMA."jobs" IN SHARE ROW EXCLUSIVE MODE;
CREATE OR REPLACE TRIGGER "jobs_count_queues_insert" AFTER INSERT ON :JOBS_SCHEMA."jobs" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION :JOBS_SCHEMA."jobs_count_queues"();
CREATE OR REPLACE TRIGGER "jobs_count_queues_update" AFTER UPDATE ON :JOBS_SCHEMA."jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION :JOBS_SCHEMA."jobs_count_queues"();
CREATE OR REPLACE TRIGGER "jobs_count_queues_delete" AFTER DELETE ON :JOBS_SCHEMA."jobs" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION :JOBS_SCHEMA."jobs_count_queues"();
CREATE OR REPLACE TRIGGER "jobs_count_queues_truncate" AFTER TRUNCATE ON :JOBS_SCHEMA."jobs"
  FOR EACH STATEMENT EXECUTE FUNCTION :JOBS_SCHEMA."jobs_count_queues"();
-- Counted again from the jobs there: a schema adopted from an earlier release was counted by a
-- trigger of the application's, which no longer counts queues.
DELETE FROM :JOBS_SCHEMA."queue_job_counts";
INSERT INTO :JOBS_SCHEMA."queue_job_counts" ("queue", "status", "slot", "n")
SELECT "queue", "status", 0, count(*) FROM :JOBS_SCHEMA."jobs" GROUP BY 1, 2;
