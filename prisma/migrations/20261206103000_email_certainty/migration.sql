SET lock_timeout = '5s';

-- Resend only on proof (docs/exactly-once.md): bulk slips go out as SendGrid scheduled sends, one
-- batch per time window; a window whose sends have unknown outcomes is cancelled before its
-- cancel cutoff and its messages sent again, or sealed once evidence settled every unknown.
-- Their indexes follow, each built CONCURRENTLY alone in its migration (20261206103001-04).

-- The batch and send_at a send went out with (null: sent at once), and the two kinds of resend.
ALTER TABLE "email_deliveries"
  ADD COLUMN "batch_id" TEXT,
  ADD COLUMN "send_at" TIMESTAMPTZ(3),
  ADD COLUMN "resent_on_proof" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "resent_by_person" INTEGER NOT NULL DEFAULT 0;

-- One SendGrid batch per window of the account's bulk sends. state: open (sends may still join
-- it), sealed (every outcome known: it goes out at send_at), cancelled (proof: SendGrid discards
-- its messages; they were sent again), uncancellable (its cutoff passed with outcomes unknown).
CREATE TABLE "email_batches" (
  "window_start" TIMESTAMPTZ(3) NOT NULL PRIMARY KEY,
  "batch_id" TEXT UNIQUE,
  "send_at" TIMESTAMPTZ(3) NOT NULL,
  "state" TEXT NOT NULL DEFAULT 'open',
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "settled_at" TIMESTAMPTZ(3),
  "cancel_deleted_at" TIMESTAMPTZ(3),
  "note" TEXT
);

-- Every send whose answer was lost, until evidence or proof settles it (never a process's memory).
-- settled_by: webhook | activity | cancelled (its batch cancelled and the email sent again) |
-- person (an HR manager or admin sent it again). Unsettled with no cancellable batch: unconfirmed.
CREATE TABLE "email_unknown_outcomes" (
  "idempotency_key" TEXT NOT NULL PRIMARY KEY,
  "recipient" TEXT NOT NULL,
  "batch_id" TEXT,
  "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "lookups" INTEGER NOT NULL DEFAULT 0,
  "last_looked_up_at" TIMESTAMPTZ(3),
  "lookup_error" TEXT,
  "settled_at" TIMESTAMPTZ(3),
  "settled_by" TEXT,
  "evidence" TEXT
);

-- The Event Webhook's health as the receiver sees it (one row).
CREATE TABLE "email_webhook_health" (
  "id" INTEGER NOT NULL PRIMARY KEY DEFAULT 1 CHECK ("id" = 1),
  "last_received_at" TIMESTAMPTZ(3),
  "last_event_at" TIMESTAMPTZ(3),
  "last_lag_ms" INTEGER,
  "max_lag_ms" INTEGER NOT NULL DEFAULT 0,
  "failures" INTEGER NOT NULL DEFAULT 0,
  "last_failure_at" TIMESTAMPTZ(3),
  "last_failure" TEXT
);

-- The settle job's scan for marks no process answered (a killed worker): the unknown ones only.
