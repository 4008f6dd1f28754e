-- Issue 16: delivery truth from SendGrid's signed Event Webhook (email_events, the per-key
-- event_state on email_deliveries), the settle window's start (request_left_at), sends made
-- after an unknown outcome (resent_after_unknown), the account-fault queue pause, and a
-- company's Reply-To.
-- AlterTable
ALTER TABLE "companies" ADD COLUMN     "reply_to_email" TEXT;

-- AlterTable
ALTER TABLE "email_deliveries" ADD COLUMN     "company_id" UUID,
ADD COLUMN     "employee_id" INTEGER,
ADD COLUMN     "event_at" TIMESTAMPTZ(3),
ADD COLUMN     "event_reason" TEXT,
ADD COLUMN     "event_state" TEXT,
ADD COLUMN     "payroll_run_id" UUID,
ADD COLUMN     "request_left_at" TIMESTAMPTZ(3),
ADD COLUMN     "resent_after_unknown" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "email_events" (
    "sg_event_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT,
    "payload" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "applied_at" TIMESTAMPTZ(3),

    CONSTRAINT "email_events_pkey" PRIMARY KEY ("sg_event_id")
);

-- CreateTable
CREATE TABLE "email_webhook_counts" (
    "outcome" TEXT NOT NULL,
    "n" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "email_webhook_counts_pkey" PRIMARY KEY ("outcome")
);

-- CreateTable
CREATE TABLE "queue_pauses" (
    "queue" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "error_code" TEXT NOT NULL,
    "paused_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "paused_by" TEXT NOT NULL,

    CONSTRAINT "queue_pauses_pkey" PRIMARY KEY ("queue")
);

-- CreateIndex
CREATE INDEX "email_events_idempotency_key_idx" ON "email_events"("idempotency_key");

-- CreateIndex
CREATE INDEX "email_deliveries_payroll_run_id_event_state_idx" ON "email_deliveries"("payroll_run_id", "event_state");

-- CreateIndex
CREATE INDEX "email_deliveries_company_id_event_state_idx" ON "email_deliveries"("company_id", "event_state");

-- CreateIndex
CREATE INDEX "email_deliveries_employee_id_idx" ON "email_deliveries"("employee_id");
