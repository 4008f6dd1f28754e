-- A protected slip's password is a secret, not personal data: by default each employee's slip
-- code, made at random by Beton and handed over once by HR (packages/payroll/src/slip-password.ts).
-- The date of birth (DDMMYYYY: about 11,000 likely values) stays only as a company's explicit,
-- weaker choice. Companies that protect their slips today keep the date of birth, so no slip
-- stops being sent; their settings page shows the warning and the switch to codes.
ALTER TABLE "companies" ADD COLUMN "slip_password" TEXT NOT NULL DEFAULT 'code';
ALTER TABLE "companies" ADD CONSTRAINT "companies_slip_password_check" CHECK ("slip_password" IN ('code', 'date-of-birth'));
UPDATE "companies" SET "slip_password" = 'date-of-birth' WHERE "protect_slips";

ALTER TABLE "employees" ADD COLUMN "slip_code" TEXT;
ALTER TABLE "employees" ADD COLUMN "slip_code_set_at" TIMESTAMPTZ(3);
