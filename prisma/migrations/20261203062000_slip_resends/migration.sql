-- HR's explicit resends of a slip (R1 one-off), one row each: who asked, when, and the n of
-- its key `slip:<month>:emp-<id>:resend-<n>`. The next n comes from here, not from counting
-- job rows: an admin's discard deletes failed job rows, and a count that drops hands out a
-- key that was already used, so the new resend would be skipped as a duplicate.
CREATE TABLE "slip_resends" (
    "id" BIGSERIAL NOT NULL,
    "employee_id" INTEGER NOT NULL,
    "month" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "job_id" BIGINT NOT NULL,

    CONSTRAINT "slip_resends_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "slip_resends_employee_id_month_n_key" ON "slip_resends"("employee_id", "month", "n");

-- AddForeignKey
ALTER TABLE "slip_resends" ADD CONSTRAINT "slip_resends_employee_id_fkey" FOREIGN KEY ("employee_id") REFERENCES "employees"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Resends made before this table: from their render jobs, with the requester from the audit log
-- (read once; the first resend-slip entry per job).
WITH "requests" AS (
  SELECT DISTINCT ON ("details"->>'jobId') "details"->>'jobId' AS "job_id", "actor", "created_at"
  FROM "audit_log" WHERE "action" = 'resend-slip'
  ORDER BY "details"->>'jobId', "id"
)
INSERT INTO "slip_resends" ("employee_id", "month", "n", "requested_by", "requested_at", "job_id")
SELECT j."employee_id", j."payload"->>'month', (j."payload"->>'resend')::int, coalesce(a."actor", 'unknown'), coalesce(a."created_at", j."created_at"), j."id"
FROM "jobs" j
JOIN "employees" e ON e."id" = j."employee_id"
LEFT JOIN "requests" a ON a."job_id" = j."id"::text
WHERE j."task_name" = 'render-slip' AND j."payload"->>'resend' ~ '^[0-9]{1,9}$' AND j."payload"->>'month' IS NOT NULL
ON CONFLICT DO NOTHING;
