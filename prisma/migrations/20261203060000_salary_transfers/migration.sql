-- Salary transfers per employee and month (R1 recurring): the payroll run submits each
-- month's transfers to the bank under a reference that names the month; the bank poll marks
-- the month's transfer credited by that reference. `employees.salary_credited_at` held one
-- credit per employee for ever: from the second month on nothing was marked.
CREATE TABLE "salary_transfers" (
    "employee_id" INTEGER NOT NULL,
    "month" TEXT NOT NULL,
    "company_id" UUID NOT NULL,
    "reference" TEXT NOT NULL,
    "bank_account" TEXT NOT NULL,
    "amount" DECIMAL(12,2) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "submitted_at" TIMESTAMPTZ(3),
    "credited_at" TIMESTAMPTZ(3),

    CONSTRAINT "salary_transfers_pkey" PRIMARY KEY ("employee_id","month")
);

CREATE UNIQUE INDEX "salary_transfers_reference_key" ON "salary_transfers"("reference");

CREATE INDEX "salary_transfers_company_id_month_idx" ON "salary_transfers"("company_id", "month");

ALTER TABLE "salary_transfers" ADD CONSTRAINT "salary_transfers_employee_id_fkey" FOREIGN KEY ("employee_id") REFERENCES "employees"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "employees" DROP COLUMN "salary_credited_at";
