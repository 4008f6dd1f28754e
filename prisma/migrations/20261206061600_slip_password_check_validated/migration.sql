-- The check of companies.slip_password, added NOT VALID by the migration before, validated
-- (a lock that lets reads and writes go on).
SET lock_timeout = '5s';
ALTER TABLE "companies" VALIDATE CONSTRAINT "companies_slip_password_check";
