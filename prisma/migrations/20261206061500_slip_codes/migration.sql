-- A protected slip's password is a secret, not personal data: by default each employee's slip
-- code, made at random by Beton and handed over once by HR (packages/payroll/src/slip-password.ts).
-- The date of birth (DDMMYYYY: about 11,000 likely values) stays only as a company's explicit,
-- weaker choice. Companies that exist now keep the rule they had — the date of birth — so no slip
-- stops being sent (the column's default for existing rows), until their HR switches in the
-- settings, which warn about it; a company made from now on starts with slip codes.
SET lock_timeout = '5s';
ALTER TABLE "companies" ADD COLUMN "slip_password" TEXT NOT NULL DEFAULT 'date-of-birth';
ALTER TABLE "companies" ALTER COLUMN "slip_password" SET DEFAULT 'code';
ALTER TABLE "companies" ADD CONSTRAINT "companies_slip_password_check" CHECK ("slip_password" IN ('code', 'date-of-birth')) NOT VALID;

ALTER TABLE "employees" ADD COLUMN "slip_code" TEXT;
ALTER TABLE "employees" ADD COLUMN "slip_code_set_at" TIMESTAMPTZ(3);
