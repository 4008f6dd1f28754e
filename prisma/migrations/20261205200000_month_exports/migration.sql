-- Issue 22: months and exports, password-protected slips.
SET lock_timeout = '5s';

-- Password-protected slips: a company setting, and the employee field the password comes from.
-- Nullable / constant default: no rewrite, no scan.
ALTER TABLE "companies" ADD COLUMN "protect_slips" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "employees" ADD COLUMN "date_of_birth" DATE;

-- A month's export (slips ZIP, payroll register CSV / XLSX) and its file in parts.
CREATE TABLE "month_exports" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "company_id" UUID NOT NULL,
    "month" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "total" INTEGER NOT NULL DEFAULT 0,
    "done" INTEGER NOT NULL DEFAULT 0,
    "filename" TEXT NOT NULL,
    "volume" INTEGER NOT NULL DEFAULT 1,
    "volumes" INTEGER NOT NULL DEFAULT 1,
    "after_code" TEXT NOT NULL DEFAULT '',
    "to_code" TEXT,
    "bytes" BIGINT,
    "sha256" TEXT,
    "error" TEXT,
    "requested_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    CONSTRAINT "month_exports_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "month_exports_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "month_export_parts" (
    "export_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    CONSTRAINT "month_export_parts_pkey" PRIMARY KEY ("export_id", "seq"),
    CONSTRAINT "month_export_parts_export_id_fkey" FOREIGN KEY ("export_id") REFERENCES "month_exports"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Whether a stored slip was encrypted: its email then says how to open it.
ALTER TABLE "slips" ADD COLUMN "encrypted" BOOLEAN NOT NULL DEFAULT false;
