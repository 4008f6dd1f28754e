-- Issue 22: HR runs their company's employees — deactivation, salaries with the month they take
-- effect, and employee imports (CSV / XLSX) applied by a background job.
SET lock_timeout = '5s';

-- A leaver: deactivated at this time, paid for the month it falls in (company time zone) and
-- never after. Null while active. Nullable without a default: no table rewrite.
ALTER TABLE "employees" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);

-- An employee's salary components from a month on: the slip (and bank transfer) of month M uses
-- the row with the latest effective_month <= M; with no such row, employees.salary (the salary
-- recorded before any dated change). One row per employee and month: a second change for the
-- same month replaces it (audited).
CREATE TABLE "salary_components" (
    "employee_id" INTEGER NOT NULL,
    "effective_month" TEXT NOT NULL,
    "components" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "salary_components_pkey" PRIMARY KEY ("employee_id", "effective_month"),
    CONSTRAINT "salary_components_employee_id_fkey" FOREIGN KEY ("employee_id") REFERENCES "employees"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- An uploaded employee file and its import: the bytes are kept here (one place to back up,
-- every web and worker replica reads them), the job's progress and counts beside them.
-- applied_rows is the checkpoint of the apply phase, written in each batch's transaction.
CREATE TABLE "employee_imports" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "company_id" UUID NOT NULL,
    "filename" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "content" BYTEA NOT NULL,
    "bytes" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "effective_month" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'uploaded',
    "phase_rows" INTEGER NOT NULL DEFAULT 0,
    "rows_total" INTEGER,
    "applied_rows" INTEGER NOT NULL DEFAULT 0,
    "new_count" INTEGER NOT NULL DEFAULT 0,
    "changed_count" INTEGER NOT NULL DEFAULT 0,
    "unchanged_count" INTEGER NOT NULL DEFAULT 0,
    "error_count" INTEGER NOT NULL DEFAULT 0,
    "applied_new" INTEGER NOT NULL DEFAULT 0,
    "applied_changed" INTEGER NOT NULL DEFAULT 0,
    "preview" JSONB,
    "failure" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "validated_at" TIMESTAMPTZ(3),
    "apply_requested_by" TEXT,
    "apply_requested_at" TIMESTAMPTZ(3),
    "applied_at" TIMESTAMPTZ(3),
    CONSTRAINT "employee_imports_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "employee_imports_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The per-row error report of an import: one reason per cell, in English and Bengali.
CREATE TABLE "employee_import_errors" (
    "import_id" UUID NOT NULL,
    "row_number" INTEGER NOT NULL,
    "column_name" TEXT NOT NULL,
    "reason_en" TEXT NOT NULL,
    "reason_bn" TEXT NOT NULL,
    CONSTRAINT "employee_import_errors_pkey" PRIMARY KEY ("import_id", "row_number", "column_name"),
    CONSTRAINT "employee_import_errors_import_id_fkey" FOREIGN KEY ("import_id") REFERENCES "employee_imports"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
